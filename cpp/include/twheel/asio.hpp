// SPDX-License-Identifier: MIT
//
// twheel/asio.hpp - libtwheel inside a Boost.Asio program: one
// boost::asio::steady_timer drives a wheel, through the host driver of
// <twheel/host.h> (read it: it states when the host timer is touched, what
// a delay counts from, and the errors). Header-only, C++17, in namespace
// tw; needs Boost.Asio (pkg-config twheel-asio++ adds libtwheel only).
//
// tw::AsioHost owns a struct twheel_host and its steady_timer. Timers are
// C struct tw_timer embedded in your objects, armed and cancelled through
// the host; their callbacks run from the steady_timer's completion handler,
// in nondecreasing order of expiry. Re-arming and cancelling never touch
// Asio unless a timer becomes the earliest one (the steady_timer is moved
// earlier) or the wheel becomes empty (it is cancelled: an idle wheel keeps
// no wait outstanding, so io_context::run() returns when nothing else is).
//
// Time: the default clock is CLOCK_MONOTONIC, which is what
// std::chrono::steady_clock reads on Linux, so the steady_timer waits for
// the absolute time point of the tick boundary it serves; with an injected
// clock it waits for the remaining time. Either way no timer runs before
// its deadline: a run advances the wheel only to what the clock says.
//
// Threads: every call, and the completion handler, on one thread at a
// time: an io_context run by one thread, or a strand passed as the
// executor (the handler is dispatched on it).
//
// Lifetime: the completion handler holds a weak reference to the host's
// state and a generation number, so a wait that completes (or was
// completed but not yet run) after a re-arm, a stop or the AsioHost's
// destruction does nothing. Destroy the AsioHost before its io_context
// (as any Asio I/O object). Destroyed from one of its callbacks, it needs
// no timer pending (see ~AsioHost()).
//
// Errors: no exception crosses the C host. The host's arm and stop catch
// what steady_timer throws (std::bad_alloc from async_wait, an Asio
// system_error). A stop that fails costs at most one wake-up that runs
// nothing. A wait that cannot be started is owed, never forgotten: the
// add() or mod() that needed it undoes its arm and returns the error; one
// needed after a run is rethrown from the completion handler, out of
// io_context::run(); either way resume(), add(), mod() and del() start
// the owed wait again, and the timers pending meanwhile stay pending.
#ifndef TWHEEL_ASIO_HPP
#define TWHEEL_ASIO_HPP

#include <twheel/host.h>
#include <twheel/twheel.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>

namespace tw {

static_assert(std::is_same_v<std::chrono::steady_clock::duration, std::chrono::nanoseconds>,
	      "tw::AsioHost expects steady_clock in nanoseconds (CLOCK_MONOTONIC)");

class AsioHost {
public:
	/// A host on @ex (an io_context's executor or a strand). @rt gives the
	/// tick and the clock (nullptr: 1 ms, CLOCK_MONOTONIC) and is copied.
	/// Throws std::bad_alloc, or std::system_error with what
	/// twheel_host_init() refused.
	explicit AsioHost(const boost::asio::any_io_executor &ex, const twheel_rt *rt = nullptr)
		: s_(std::make_shared<state>(ex))
	{
		s_->self = s_;
		s_->hh.s = s_.get();
		if (int rc = twheel_host_init(&s_->hh.h, rt, &ops); rc < 0)
			throw std::system_error(-rc, std::generic_category(), "twheel_host_init");
		s_->live = true;
	}
	explicit AsioHost(boost::asio::io_context &io, const twheel_rt *rt = nullptr)
		: AsioHost(boost::asio::any_io_executor(io.get_executor()), rt)
	{
	}
	AsioHost(const AsioHost &) = delete;
	AsioHost &operator=(const AsioHost &) = delete;

	/// shutdown(nullptr): pending timers are dropped (unlinked, not run).
	/// From one of its callbacks (a timer's, or shutdown()'s fn), the wheel
	/// cannot be drained until that callback returns, and a timer left
	/// pending would be touched then, after the object that owns this
	/// AsioHost (and, in the idiom "delete this", the timer) is freed. So
	/// there it must have no timer pending (del() them first, e.g. in the
	/// owner's destructor): the shutdown then happens when the run returns.
	/// With timers still pending it refuses: it prints how many to stderr
	/// and aborts, as a misuse (a use-after-free otherwise).
	~AsioHost()
	{
		if (shutdown(nullptr, nullptr) != -EBUSY)
			return;
		if (const std::size_t n = twheel_count(twheel_host_wheel(&s_->hh.h))) {
			std::fprintf(stderr,
				     "tw::AsioHost destroyed from one of its callbacks with %zu timer(s) "
				     "pending: del() them first\n",
				     n);
			std::abort();
		}
		s_->closing = true;
	}

	/// Hand every pending timer to @fn(@t, @arg) exactly once (@fn may be
	/// nullptr, may free the timer; timers it arms again are dropped),
	/// cancel the steady_timer. Afterwards every call fails with -EINVAL.
	/// Returns 0, -EBUSY from one of the wheel's callbacks (nothing done),
	/// or -EINVAL if already shut down. O(pending timers).
	int shutdown(void (*fn)(tw_timer *t, void *arg), void *arg) noexcept
	{
		const std::shared_ptr<state> s = s_; // @fn may destroy this AsioHost
		if (!s->live)
			return -EINVAL;
		if (int rc = twheel_host_fini(&s->hh.h, fn, arg); rc < 0)
			return rc;
		s->live = false;
		return 0;
	}

	/// The host, for the calls of <twheel/host.h>; nullptr after shutdown().
	twheel_host *get() noexcept { return s_->live ? &s_->hh.h : nullptr; }

	/// twheel_host_add() / twheel_host_mod() with @d rounded up to whole
	/// nanoseconds (zero or negative: 0; beyond 2^64 ns: saturated). Also
	/// -ENOMEM (std::bad_alloc), -errno of an Asio error, or -EIO (another
	/// exception) if the steady_timer's wait that @t needs, or one owed
	/// from before, cannot be started: then @t is not pending (a mod() of
	/// a pending @t cancelled it), and the wait owed for the other timers
	/// is retried by the next call (see resume()).
	template <class Rep, class Period>
	int add(tw_timer &t, std::chrono::duration<Rep, Period> d) noexcept
	{
		if (int rc = resume(); rc < 0)
			return rc;
		return settle(t, twheel_host_add(get(), &t, ticks_ceil(d, std::chrono::nanoseconds(1))));
	}
	template <class Rep, class Period>
	int mod(tw_timer &t, std::chrono::duration<Rep, Period> d) noexcept
	{
		if (int rc = resume(); rc < 0) {
			twheel_host_del(get(), &t);
			return rc;
		}
		return settle(t, twheel_host_mod(get(), &t, ticks_ceil(d, std::chrono::nanoseconds(1))));
	}
	/// twheel_host_del(); then retries an owed wait (see resume()).
	int del(tw_timer &t) noexcept
	{
		const int rc = twheel_host_del(get(), &t);
		resume();
		return rc;
	}

	/// Starts the steady_timer's wait if one is owed: a failure to start it
	/// (reported by add() or mod(), or thrown out of io_context::run() by
	/// the completion handler) left the pending timers without a wait.
	/// Returns 0 (also when nothing is owed or after shutdown()), or the
	/// error of add(); then the wait is still owed. O(1).
	int resume() noexcept
	{
		if (!s_->live || !s_->owed)
			return 0;
		wait(s_.get(), s_->owed_at);
		return s_->owed ? s_->owed_err : 0;
	}

private:
	struct state;
	// Standard-layout, the host first: a host pointer converts to it.
	struct hosted {
		twheel_host h;
		state *s;
	};
	using clock = std::chrono::steady_clock;
	struct state {
		explicit state(const boost::asio::any_io_executor &ex) : timer(ex) {}
		hosted hh{};                // the host, and the way back from it
		boost::asio::steady_timer timer;
		std::weak_ptr<state> self;  // for the completion handlers
		std::uint64_t gen = 0;      // bumped by every arm and stop
		bool live = false;
		bool closing = false;       // destroyed from a callback: fini after the run
		bool owed = false;          // the host counts on a wait that failed to start
		clock::time_point owed_at;  // what it was for
		int owed_err = 0;           // and why (-errno)
		std::exception_ptr owed_exc;
	};

	static state *of(twheel_host *h) noexcept { return reinterpret_cast<hosted *>(h)->s; }

	// After an add or mod of @t returned @rc: if the wait it needed could
	// not be started, undo it (the caller is told; @t must not be left
	// pending without a wait) and retry the wait for the others.
	int settle(tw_timer &t, int rc) noexcept
	{
		if (rc < 0 || !s_->owed)
			return rc;
		const int err = s_->owed_err;
		twheel_host_del(&s_->hh.h, &t); // may stop: nothing owed then
		resume();
		return err;
	}

	// The -errno of the exception being handled.
	static int error_of_current() noexcept
	{
		try {
			throw;
		} catch (const std::bad_alloc &) {
			return -ENOMEM;
		} catch (const boost::system::system_error &e) {
			return e.code().value() > 0 ? -e.code().value() : -EIO;
		} catch (const std::system_error &e) {
			return e.code().value() > 0 ? -e.code().value() : -EIO;
		} catch (...) {
			return -EIO;
		}
	}

	// Starts the one wait, for @at; remembers a failure to (owed).
	static void wait(state *s, clock::time_point at) noexcept
	{
		const std::uint64_t gen = ++s->gen;
		try {
			s->timer.expires_at(at);
			s->timer.async_wait(boost::asio::bind_executor(
				s->timer.get_executor(),
				[w = s->self, gen](const boost::system::error_code &ec) {
					auto p = w.lock();
					if (ec || !p || !p->live || p->gen != gen)
						return; // cancelled, re-armed, stopped or gone
					twheel_host_run(&p->hh.h);
					if (p->closing) {
						twheel_host_fini(&p->hh.h, nullptr, nullptr);
						p->live = false;
					} else if (p->owed) {
						// the re-arm after the run failed: out of
						// io_context::run(), never silently
						std::rethrow_exception(p->owed_exc);
					}
				}));
			s->owed = false;
			s->owed_exc = nullptr;
		} catch (...) {
			s->owed = true;
			s->owed_at = at;
			s->owed_err = error_of_current();
			s->owed_exc = std::current_exception();
		}
	}

	static void arm(twheel_host *h, std::uint64_t wake, std::uint64_t now) noexcept
	{
		state *s = of(h);
		constexpr auto max = static_cast<std::uint64_t>(std::chrono::nanoseconds::max().count());
		if (twheel_host_rt(h)->clock != twheel_rt_clock_monotonic) {
			// another epoch: wait for the remaining time from now on
			const std::uint64_t left = wake - now;
			if (left <= max && clock::now().time_since_epoch().count() <
						   clock::duration::max().count() - static_cast<std::int64_t>(left))
				wake = static_cast<std::uint64_t>((clock::now() + std::chrono::nanoseconds(left))
								  .time_since_epoch()
								  .count());
			else
				wake = UINT64_MAX;
		}
		// steady_clock is CLOCK_MONOTONIC in nanoseconds
		wait(s, wake <= max ? clock::time_point(std::chrono::nanoseconds(wake)) : clock::time_point::max());
	}

	// A cancel that throws leaves a wait outstanding, which the new
	// generation turns into a wake-up that runs nothing.
	static void stop(twheel_host *h) noexcept
	{
		state *s = of(h);
		++s->gen;
		s->owed = false;
		s->owed_exc = nullptr;
		try {
			s->timer.cancel();
		} catch (...) {
		}
	}

	static inline const twheel_host_ops ops = { arm, stop };

	std::shared_ptr<state> s_;
};

} // namespace tw

#endif // TWHEEL_ASIO_HPP
