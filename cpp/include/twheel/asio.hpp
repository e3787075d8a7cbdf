// SPDX-License-Identifier: MIT
//
// twheel/asio.hpp - tw::AsioHost, the owner of a wheel inside a Boost.Asio
// program: one boost::asio::steady_timer drives it through the host driver
// of <twheel/host.h>. Its timers are tw::Timer<tw::AsioHost> and
// tw::Hook<tw::AsioHost, D> (<twheel/timer.hpp>), run from the
// steady_timer's completion handler in order of expiry; an empty wheel
// keeps no wait outstanding, so io_context::run() returns. Time is
// steady_clock (CLOCK_MONOTONIC) or the injected rt clock. One thread at a
// time: an io_context run by one thread, or a strand. Destroy the
// AsioHost before its io_context; one destroyed first is noticed (the
// host is lost: every arm throws tw::error ESHUTDOWN, the destructor
// cancels what is pending). Header-only, C++17; the program brings
// Boost.Asio (1.74 or later: any_io_executor). docs/cpp.md: lateness, and a
// wait that cannot start.
#ifndef TWHEEL_ASIO_HPP
#define TWHEEL_ASIO_HPP

#include <twheel/host.h>
#include <twheel/twheel.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

namespace tw {

static_assert(std::is_same_v<std::chrono::steady_clock::duration, std::chrono::nanoseconds>,
	      "tw::AsioHost expects steady_clock in nanoseconds (CLOCK_MONOTONIC)");

class AsioHost : public detail::owner<AsioHost> {
public:
	using time_point = std::chrono::steady_clock::time_point;

	/// A host on @ex (an io_context's executor or a strand). @rt gives the
	/// tick and the clock (nullptr: 1 ms, CLOCK_MONOTONIC) and is copied.
	/// Joins the execution context's list of hosts (an Asio service of its
	/// own: a mutex, a vector), which tells it when the context is
	/// destroyed first. Throws std::bad_alloc, or tw::error: EINVAL for an
	/// empty @ex, what twheel_host_init_ext() refused.
	explicit AsioHost(const boost::asio::any_io_executor &ex, const twheel_rt *rt = nullptr)
		: s_(std::make_shared<state>(ex))
	{
		std::unique_ptr<detail::ctx> x(new detail::ctx); // first: nothing to undo
		// after the steady_timer: its service is then older than ours
		hosts &list = boost::asio::use_service<hosts>(boost::asio::query(ex, boost::asio::execution::context));
		list.add(s_.get());
		s_->list = &list;
		s_->self = s_;
		s_->hh.s = s_.get();
		if (int rc = twheel_host_init_ext(&s_->hh.h, rt, &ops); rc < 0)
			detail::fail(rc, "tw: twheel_host_init_ext() refused");
		twheel_host_defer(&s_->hh.h, true);
		x->c = &s_->hh.h;
		x->tick_ns = twheel_host_rt(&s_->hh.h)->tick_ns;
		x->tick_inv = UINT64_MAX / x->tick_ns;
		ctx_ = s_->x = x.release();
	}
	explicit AsioHost(boost::asio::io_context &io, const twheel_rt *rt = nullptr)
		: AsioHost(boost::asio::any_io_executor(io.get_executor()), rt)
	{
	}
	/// Destroyed (by the rule of detail::owner): cancels the steady_timer
	/// too; C timers armed through get() are dropped unrun.
	~AsioHost() { close(); }
	/// Moves as detail::owner says (timers and waits stay with the host).
	AsioHost(AsioHost &&) noexcept = default;
	AsioHost &operator=(AsioHost &&) noexcept = default;

	/// The C host, for the calls of <twheel/host.h> (a C tw_timer, stats);
	/// nullptr once it is gone.
	twheel_host *get() noexcept { return s_ && s_->x && s_->x->c ? &s_->hh.h : nullptr; }
	/// The host's time (twheel_host_now()).
	time_point now() const noexcept { return detail::ns_tp<time_point>(s_ ? twheel_host_now(&s_->hh.h) : 0); }
	/// Timers pending.
	std::size_t size() const noexcept { return s_ && s_->x ? twheel_count(twheel_host_wheel(&s_->hh.h)) : 0; }

	/// A wait that cannot start (std::bad_alloc, an Asio error) is owed:
	/// the arm that needed it is undone (a pending timer cancelled, its
	/// cancellation callback run) and throws tw::error (ENOMEM, the Asio
	/// errno, EIO); one needed after a run is rethrown out of
	/// io_context::run(). resume() (or the next arm) starts it: 0, or the
	/// -errno of the failure, and then it is still owed. O(1).
	int resume() noexcept { return s_ ? resume(s_.get()) : -EINVAL; }

private:
	struct state;
	// Standard-layout, the host first: a host pointer converts to it.
	struct hosted {
		twheel_host h;
		state *s;
	};
	using clock = std::chrono::steady_clock;
	struct hosts;
	struct state {
		explicit state(const boost::asio::any_io_executor &ex)
		{
			timer.emplace(ex ? ex : throw error(EINVAL, "tw: the executor is empty"));
		}
		~state()
		{
			if (list)
				list->remove(this);
		}
		hosted hh{};                // the host, and the way back from it
		std::optional<boost::asio::steady_timer> timer; // none once the io_context is gone
		hosts *list = nullptr;      // the io_context's hosts, while it lives
		std::weak_ptr<state> self;  // for the completion handlers
		detail::ctx *x = nullptr;   // shared with the timers; x->c: live
		std::uint64_t gen = 0;      // bumped by every arm and stop
		bool placing = false;       // a placement handler is queued (one at a time)
		std::exception_ptr owed;    // why a wait the host counts on failed to start
		clock::time_point owed_at;  // what it was for
	};

	// The io_context's list of its live hosts, an Asio service of its own:
	// when the io_context is destroyed, its shutdown() runs before that of
	// the steady_timer's service (services shut down newest first, and
	// this one is made after the host's steady_timer), and marks each host
	// lost (twheel_host_lost(): its arms fail with ESHUTDOWN) and destroys
	// its steady_timer while that can still be done.
	struct hosts : boost::asio::execution_context::service {
		static inline boost::asio::execution_context::id id;
		explicit hosts(boost::asio::execution_context &c) : service(c) {}
		void add(state *s)
		{
			const std::lock_guard<std::mutex> l(m);
			live.push_back(s);
		}
		void remove(state *s) noexcept
		{
			const std::lock_guard<std::mutex> l(m);
			live.erase(std::remove(live.begin(), live.end(), s), live.end());
		}

	private:
		void shutdown() override
		{
			std::vector<state *> gone;
			{
				const std::lock_guard<std::mutex> l(m);
				gone.swap(live);
			}
			for (state *s : gone) {
				s->list = nullptr;
				s->owed = nullptr;
				s->timer.reset();
				if (s->x && s->x->c)
					twheel_host_lost(&s->hh.h);
			}
		}
		std::mutex m;
		std::vector<state *> live;
	};

	static state *of(twheel_host *h) noexcept { return reinterpret_cast<hosted *>(h)->s; }
	static twheel_host *host(detail::ctx *x) noexcept { return static_cast<twheel_host *>(x->c); }

	static int resume(state *s) noexcept
	{
		if (!s->x || !s->x->c || !s->owed || !s->timer)
			return 0;
		wait(s, s->owed_at);
		return s->owed ? error_of(s->owed) : 0;
	}

	// Cancels the timers, then finishes the host (the state is freed with
	// its last reference: the AsioHost's, a handler's).
	static void finish(detail::ctx *x) noexcept
	{
		state *s = of(host(x));
		twheel_host_fini(host(x), &detail::drained<tw_timer>, x);
		x->c = nullptr;
		s->x = nullptr;
		s->owed = nullptr;
	}

	// The -errno of @e.
	static int error_of(const std::exception_ptr &e) noexcept
	{
		try {
			std::rethrow_exception(e);
		} catch (const std::bad_alloc &) {
			return -ENOMEM;
		} catch (const boost::system::system_error &x) {
			return x.code().value() > 0 ? -x.code().value() : -EIO;
		} catch (const std::system_error &x) {
			return x.code().value() > 0 ? -x.code().value() : -EIO;
		} catch (...) {
			return -EIO;
		}
	}

	// Starts the one wait, for @at; remembers a failure to (owed).
	static void wait(state *s, clock::time_point at) noexcept
	{
		const std::uint64_t gen = ++s->gen;
		try {
			s->timer->expires_at(at);
			s->timer->async_wait(boost::asio::bind_executor(
				s->timer->get_executor(),
				[w = s->self, gen](const boost::system::error_code &ec) {
					auto p = w.lock();
					if (ec || !p || !p->x || p->gen != gen)
						return; // cancelled, re-armed, stopped or gone
					{
						const detail::run_frame f(p->x, &finish);
						twheel_host_run(&p->hh.h);
					}
					if (p->owed) // the re-arm after the run failed: out of
						std::rethrow_exception(p->owed); // io_context::run(), never silently
				}));
			s->owed = nullptr;
		} catch (...) {
			s->owed = std::current_exception();
			s->owed_at = at;
		}
	}

	static void arm(twheel_host *h, std::uint64_t wake, std::uint64_t now) noexcept
	{
		if (!of(h)->timer) { // the io_context is gone
			twheel_host_lost(h);
			return;
		}
		// another epoch: wait for the remaining time from now on
		if (twheel_host_rt(h)->clock != twheel_rt_clock_monotonic)
			wake = detail::add_sat(detail::tp_ns(clock::now()), wake - now);
		wait(of(h), detail::ns_tp<clock::time_point>(wake)); // steady_clock is CLOCK_MONOTONIC
	}

	// A cancel that throws leaves a wait outstanding, which the new
	// generation turns into a wake-up that runs nothing.
	static void stop(twheel_host *h) noexcept
	{
		state *s = of(h);
		++s->gen;
		s->owed = nullptr;
		try {
			if (s->timer)
				s->timer->cancel();
		} catch (...) {
		}
	}

	// The first arm by delay parked after a placement: post the placement
	// (never dispatch: that could place before the arms that follow). The
	// handler is the only one while placing is set, so a weak reference
	// suffices; nonzero (std::bad_alloc...) makes the host place at once.
	static int parked(twheel_host *h) noexcept
	{
		state *s = of(h);
		if (!s->timer) { // the io_context is gone
			twheel_host_lost(h);
			return -1;
		}
		if (s->placing)
			return 0;
		try {
			boost::asio::post(s->timer->get_executor(), [w = s->self] {
				auto p = w.lock();
				if (!p || !p->x)
					return; // the host is gone
				const std::uint64_t gen = p->gen;
				p->placing = false;
				twheel_host_place(&p->hh.h);
				if (p->owed && p->gen != gen) // its re-arm failed: out of run()
					std::rethrow_exception(p->owed);
			});
		} catch (...) {
			return -1;
		}
		s->placing = true;
		return 0;
	}

	static inline const twheel_host_ops_ext ops = { { arm, stop }, parked };

	std::shared_ptr<state> s_;

	friend class detail::owner<AsioHost>;
	friend struct detail::ops<AsioHost>;
};

namespace detail {

// The C calls behind Timer<AsioHost> and Hook<AsioHost, D>.
template <>
struct ops<AsioHost> : wheel_node_ops {
	using S = AsioHost;
	static ctx *share(AsioHost &o) { return retain(o.checked()); }
	template <class T>
	static bool open(const ctx *c, T) noexcept { return !c->closing; }
	template <class T>
	static int mod_at(ctx *c, node *n, T t) noexcept { return mod(c, n, ns_ceil(t), twheel_host_mod_at); }
	template <class T>
	static int mod_in(ctx *c, node *n, T t) noexcept { return mod(c, n, ns_ceil(t), twheel_host_mod); }
	// The wait owed, or the one it needs, does not start: undo it (resume()).
	static int mod(ctx *c, node *n, std::uint64_t ns, int (*f)(twheel_host *, tw_timer *, std::uint64_t)) noexcept
	{
		AsioHost::state *s = AsioHost::of(S::host(c));
		const bool was = tw_timer_pending(n);
		int rc = AsioHost::resume(s);
		if (!rc && ((rc = f(S::host(c), n, ns)) < 0 || !s->owed))
			return rc;
		rc = rc < 0 ? rc : AsioHost::error_of(s->owed);
		twheel_host_del(S::host(c), n); // may stop: nothing owed then
		AsioHost::resume(s);            // retry the wait for the others
		if (auto cancel = was ? c->canceller(n->func) : nullptr)
			cancel(n);
		return rc;
	}
	static bool del(ctx *c, node *n) noexcept
	{
		if (!c->c)
			return false;
		const bool r = twheel_host_del(S::host(c), n) == 1;
		AsioHost::resume(AsioHost::of(S::host(c)));
		return r;
	}
	static std::uint64_t now(const ctx *c) noexcept { return twheel_host_now(static_cast<twheel_host *>(c->c)); }
	// an arm by delay waits parked until its placement: the host knows its tick
	static std::uint64_t expiry(const ctx *c, const node *n) noexcept
	{
		return ns(c, twheel_host_expires(static_cast<const twheel_host *>(c->c), n));
	}
	static void move(ctx *c, node *dst, node *src) noexcept
	{
		twheel_move(c ? twheel_host_wheel(S::host(c)) : nullptr, dst, src);
	}
};

} // namespace detail
} // namespace tw

#endif // TWHEEL_ASIO_HPP
