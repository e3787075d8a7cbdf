// SPDX-License-Identifier: MIT
//
// twheel/loop.hpp - the thin C++17 layer over the io_uring event loop
// (<twheel/loop.h> states each call's semantics, errors and threads);
// header-only, link with twheel-uring; docs/cpp.md is the manual. tw::Loop
// owns a struct twheel_loop; tw::LoopTimer points to a heap block holding
// the C timer and its callables; tw::LoopTimerHook<Derived> is an
// intrusive one. All on the loop thread except post(),
// stop(), stopped(), clock_now() and tick(). Loop time is the loop clock in
// ns as a steady_clock::time_point. Lifetime and exceptions as in
// <twheel/twheel.hpp>; an empty callable is refused (std::invalid_argument)
// before anything is allocated or queued. ~Loop may be called from one of
// the loop's callbacks: it completes when the run() or run_once() that
// called the callback returns.
#ifndef TWHEEL_LOOP_HPP
#define TWHEEL_LOOP_HPP

#include <twheel/twheel.hpp>

#include <liburing.h> // submit() prepares SQEs; C++ compilers define _GNU_SOURCE
#include <twheel/loop.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <memory>

namespace tw {

/// How a periodic timer catches up after missing deadlines (TW_LOOP_MISFIRE_*).
enum class misfire { skip, once, all };

/// Where a periodic timer's next deadline counts from: the previous deadline
/// (fixed_rate) or the end of the previous run (fixed_delay).
enum class schedule { fixed_rate, fixed_delay };

/// struct twheel_loop_config; zeros mean the C defaults.
struct loop_options {
	std::chrono::nanoseconds tick = std::chrono::milliseconds(1); ///< 1 us .. 1 s; 0: 1 ms
	unsigned entries = 0;                                         ///< SQ entries
	unsigned batch = 0;                                           ///< posts per iteration
	unsigned flags = 0;                                           ///< raw C config flags
	/// The loop clock, empty (a null function pointer makes it empty too)
	/// for CLOCK_MONOTONIC. Copied by the Loop. Called from any thread;
	/// monotonic; must not throw (it would cross a C frame: terminate).
	std::function<std::chrono::steady_clock::time_point()> clock;
};

class Loop;
template <class Derived, class Tag>
class LoopTimerHook;

namespace detail {

// What a Loop shares with its handles and requests (as wheel_ctx), the
// clock and the in-flight I/O. @running counts the run() and run_once()
// frames on the loop thread: a ~Loop that finds one is called from a
// callback, and the outermost frame finishes the destruction when the C
// call returns. @closing: ~Loop has begun; arming is dropped from then on.
struct loop_ctx {
	twheel_loop *loop = nullptr;
	exception_handler on_exception;
	std::function<std::chrono::steady_clock::time_point()> clock;
	tw_list io;
	std::size_t refs = 1;
	unsigned running = 0;
	bool closing = false;
};

// True for what the callable store takes as empty: a null function or
// member pointer, an empty std::function (any callable whose bool
// conversion is false). Takes the decayed type: a function is never null.
template <class D>
bool empty_callable(const D &f) noexcept
{
	if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D>)
		return f == nullptr;
	else if constexpr (std::is_constructible_v<bool, const D &>)
		return !static_cast<bool>(f);
	else
		return false;
}

template <class F>
void refuse_empty(const F &f, const char *what)
{
	if (empty_callable<std::decay_t<F>>(f))
		throw std::invalid_argument(std::string(what) + ": empty callable");
}

inline std::chrono::steady_clock::time_point from_ns(std::uint64_t ns) noexcept
{
	const auto d = std::chrono::nanoseconds(
		static_cast<std::int64_t>(std::min<std::uint64_t>(ns, std::numeric_limits<std::int64_t>::max())));
	return std::chrono::steady_clock::time_point(
		std::chrono::duration_cast<std::chrono::steady_clock::duration>(d));
}

inline std::uint64_t to_ns(std::chrono::steady_clock::time_point tp) noexcept
{
	return ticks_ceil(tp.time_since_epoch(), std::chrono::nanoseconds(1));
}

// A function posted to the loop.
struct work {
	tw_loop_work w; // first: the C node leads back here
	loop_ctx *ctx;
	fn<32> f;

	static void run(tw_loop_work *w) noexcept
	{
		auto *it = reinterpret_cast<work *>(w);
		guarded(it->ctx->on_exception, it->f);
		delete it;
	}
};

// An I/O request in flight, linked in the loop's list so that ~Loop frees
// those that never complete. The request ends with the first CQE without
// IORING_CQE_F_MORE (a multishot one too, and that CQE may still carry a
// result): the handler gets it, then the request is freed.
struct io_op {
	tw_loop_io io; // first
	loop_ctx *ctx;
	tw_list link;
	bool dead = false; // its SQE was turned into a no-op
	fn<32, const io_uring_cqe &> h;

	static void complete(tw_loop_io *io, const io_uring_cqe *cqe) noexcept
	{
		auto *op = reinterpret_cast<io_op *>(io);
		if (!op->dead)
			guarded(op->ctx->on_exception, op->h, *cqe);
		if (!(cqe->flags & IORING_CQE_F_MORE)) {
			tw_list_del(&op->link);
			delete op;
		}
	}
};

// The C timer of a LoopTimer's block or of a LoopTimerHook, and what ~Loop
// does with it when the C loop hands it back: a LoopTimer runs its
// cancellation callback, a hook (nullptr) is dropped. Told by this pointer
// stored in each timer, never by the address of an inline function.
struct loop_timer_node {
	tw_loop_timer t; // first: the C node leads back here
	void (*dropped)(loop_timer_node *) noexcept;
};

// twheel_loop_mod() or _mod_at() of @t on @c's loop for the arm_in() and
// arm_at() of both timer kinds: true if it was armed; false, dropped, while
// ~Loop runs.
inline bool arm_timer(loop_ctx *c, tw_loop_timer *t, int (*mod)(twheel_loop *, tw_loop_timer *, std::uint64_t),
		      std::uint64_t ns, const char *what)
{
	if (!c || !c->loop)
		throw std::logic_error(std::string(what) + (c ? ": the loop was destroyed" : ": empty timer"));
	if (c->closing)
		return false;
	const int r = mod(c->loop, t, ns);
	if (r < 0)
		throw_errno(r, what);
	return r == 1;
}

} // namespace detail

/// A timer on a Loop, made by Loop::after(), at(), every() or timer(). The
/// callback is invocable as f() or f(tw::LoopTimer &). 8 bytes.
class LoopTimer {
public:
	/// Callable bytes stored in the timer's block without another allocation.
	static constexpr std::size_t inline_capacity = 48;

	/// An empty handle: operator bool false, cancel() a no-op, arming throws.
	LoopTimer() noexcept = default;
	LoopTimer(LoopTimer &&o) noexcept { take(o); }
	/// Takes @o's timer out of @o first (so that the cancellation callback
	/// may destroy @o), cancels and frees this timer (as the destructor),
	/// then keeps what was @o's.
	LoopTimer &operator=(LoopTimer &&o) noexcept
	{
		if (this != &o) {
			LoopTimer from(std::move(o));
			reset();
			take(from);
		}
		return *this;
	}
	/// Cancels and frees it (once its callback or its cancellation callback
	/// returns, if called there); what the cancellation callback re-arms is
	/// dropped.
	~LoopTimer() { reset(); }

	/// twheel_loop_mod() with @d rounded up to whole ns; true if it was
	/// armed. While its Loop is being destroyed the arming is dropped
	/// (false, no exception). Throws std::logic_error on an empty handle or
	/// once the loop is gone, std::system_error with the C error (ESHUTDOWN
	/// once the loop is stopped).
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		return arm(twheel_loop_mod, ticks_ceil(d, std::chrono::nanoseconds(1)), "tw::LoopTimer::arm_in");
	}
	/// twheel_loop_mod_at(); as arm_in().
	bool arm_at(std::chrono::steady_clock::time_point tp)
	{
		return arm(twheel_loop_mod_at, detail::to_ns(tp), "tw::LoopTimer::arm_at");
	}

	/// twheel_loop_del(): true if it was armed (or is a periodic timer whose
	/// callback runs), and then the cancellation callback has run (which
	/// may destroy or move this handle: cancel() does not touch it after).
	bool cancel() noexcept
	{
		if (!*this || twheel_loop_del(b_->ctx->loop, &b_->t) != 1)
			return false;
		cancelled(b_);
		return true;
	}

	/// Armed on the loop (false inside its own callback, even when periodic).
	bool pending() const noexcept { return *this && twheel_loop_pending(b_->ctx->loop, &b_->t); }
	/// The deadline it is (or was last) armed for, or is being served.
	std::chrono::steady_clock::time_point deadline() const noexcept { return detail::from_ns(b_ ? b_->t.deadline : 0); }
	/// The period, zero for a one-shot timer (nanoseconds::max() for one
	/// beyond it: every() saturates at 2^64 - 1 ns).
	std::chrono::nanoseconds period() const noexcept
	{
		const std::uint64_t p = b_ ? b_->t.period : 0;
		return p > static_cast<std::uint64_t>(std::chrono::nanoseconds::max().count())
			       ? std::chrono::nanoseconds::max()
			       : std::chrono::nanoseconds(static_cast<std::int64_t>(p));
	}
	/// Inside a periodic callback: how many further deadlines had passed.
	std::uint32_t missed() const noexcept { return b_ ? b_->t.missed : 0; }

	/// Sets the cancellation callback g() (nullptr, a null function pointer
	/// or an empty std::function removes it), run whenever the timer stops
	/// being pending unfired, from inside cancel(), the destructor, an
	/// assignment or ~Loop. Run by cancel() or ~Loop, g may destroy or move
	/// this handle (the block is freed once g returns); run by the
	/// destructor or an assignment, it must not destroy or assign over it.
	/// It must never call this handle's on_cancel(). What it arms from the
	/// destructor, an assignment or ~Loop is dropped. Allocates only if g
	/// exceeds 16 bytes. Throws std::logic_error on an empty handle, what
	/// copying g throws (the previous g then stays).
	template <class G>
	void on_cancel(G &&g)
	{
		if (!b_)
			throw std::logic_error("tw::LoopTimer::on_cancel on an empty timer");
		if constexpr (std::is_same_v<std::decay_t<G>, std::nullptr_t>)
			b_->on_cancel.reset();
		else
			b_->on_cancel.emplace(std::forward<G>(g));
	}

	/// Has a timer, and its loop still exists.
	explicit operator bool() const noexcept { return b_ && b_->ctx->loop; }
	/// The C timer (read-only), nullptr if empty.
	const tw_loop_timer *native_handle() const noexcept { return b_ ? &b_->t : nullptr; }

private:
	// @busy counts the calls of f and g running now; a handle that lets
	// go of the block meanwhile marks it @orphan, and the last of those
	// calls to return frees it.
	struct block : detail::loop_timer_node {
		detail::loop_ctx *ctx;
		LoopTimer *owner;
		detail::fn<inline_capacity, LoopTimer &> f;
		detail::fn<16> on_cancel;
		unsigned busy = 0;
		bool orphan = false;
		~block() { detail::release(ctx); }
	};

	// A timer of loop @c running @f; periodic if @period_ns is not 0.
	template <class F>
	LoopTimer(detail::loop_ctx *c, F &&f, std::uint64_t period_ns, unsigned flags)
	{
		detail::refuse_empty(f, "tw::Loop");
		std::unique_ptr<block> b(new block{{{}, &dropped}, detail::retain(c), this, {}, {}});
		const int r = period_ns ? tw_loop_timer_init_periodic(&b->t, &fire, period_ns, flags)
					: tw_loop_timer_init(&b->t, &fire, flags);
		if (r < 0)
			detail::throw_errno(r, "tw::Loop: bad timer");
		b->f.emplace(std::forward<F>(f));
		if (!b->f)
			throw std::invalid_argument("tw::Loop: empty callable");
		b_ = b.release();
	}

	void take(LoopTimer &o) noexcept
	{
		if ((b_ = std::exchange(o.b_, nullptr)))
			b_->owner = this;
	}

	bool arm(int (*mod)(twheel_loop *, tw_loop_timer *, std::uint64_t), std::uint64_t ns, const char *what)
	{
		return detail::arm_timer(b_ ? b_->ctx : nullptr, b_ ? &b_->t : nullptr, mod, ns, what);
	}

	// Cancels (g may re-arm, or move this handle: then the timer is the
	// new handle's), drops a re-arm, lets go of the block.
	void reset() noexcept
	{
		block *b = b_;
		if (!b)
			return;
		cancel();
		if (b_ != b)
			return;
		if (*this) // drop what the cancellation callback re-armed
			twheel_loop_del(b->ctx->loop, &b->t);
		b_ = nullptr;
		b->owner = nullptr;
		if (b->busy)
			b->orphan = true; // f or g runs: freed when it returns
		else
			delete b;
	}

	static void done(block *b) noexcept
	{
		if (--b->busy == 0 && b->orphan)
			delete b;
	}

	static void cancelled(block *b) noexcept
	{
		if (!b->on_cancel)
			return;
		b->busy++;
		detail::guarded(b->ctx->on_exception, b->on_cancel);
		done(b);
	}

	static void dropped(detail::loop_timer_node *n) noexcept { cancelled(static_cast<block *>(n)); }

	static void fire(tw_loop_timer *t) noexcept
	{
		auto *b = static_cast<block *>(reinterpret_cast<detail::loop_timer_node *>(t));
		b->busy++; // the block's ctx is kept alive by the running Loop
		detail::guarded(b->ctx->on_exception, b->f, *b->owner);
		done(b);
	}

	block *b_ = nullptr;

	friend class Loop;
};

/// An io_uring event loop driving a timer wheel: owns a struct twheel_loop.
/// Move-only; timers and I/O keep working across a move.
class Loop {
public:
	using time_point = std::chrono::steady_clock::time_point;

	/// twheel_loop_create(): io_uring mode, or fallback mode (timers and posts,
	/// no I/O requests: features() has TW_LOOP_FEAT_FALLBACK) where io_uring is
	/// refused (EPERM), absent (ENOSYS) or older than 5.11 (EOPNOTSUPP), or
	/// with TW_LOOP_NO_URING. Throws std::system_error with the C error
	/// and the C library's explanation: EINVAL (bad tick or flags, entries
	/// too large), ENOMEM, EMFILE, ENFILE, and with TW_LOOP_URING_ONLY the
	/// io_uring errors above instead of fallback mode; what copying
	/// @opt.clock throws; std::bad_alloc. Nothing is leaked on a throw.
	explicit Loop(const loop_options &opt = loop_options())
	{
		std::unique_ptr<detail::loop_ctx> c(new detail::loop_ctx);
		tw_list_init(&c->io);
		twheel_loop_config cfg;
		twheel_loop_config_init(&cfg);
		// zero: the C default; negative: 1 ns, which the C library refuses
		cfg.tick_ns = opt.tick.count() >= 0 ? static_cast<std::uint64_t>(opt.tick.count()) : 1u;
		cfg.entries = opt.entries;
		cfg.batch = opt.batch;
		cfg.flags = opt.flags;
		if (opt.clock) {
			c->clock = opt.clock;
			cfg.clock = [](void *arg) noexcept {
				return detail::to_ns(static_cast<detail::loop_ctx *>(arg)->clock());
			};
			cfg.clock_arg = c.get();
		}
		char msg[256] = "";
		const int r = twheel_loop_create(&c->loop, &cfg, msg, sizeof msg);
		if (r < 0)
			throw std::system_error(-r, std::generic_category(), std::string("tw::Loop: ") + msg);
		ctx_ = c.release();
	}

	/// @o is left empty. Not while it runs.
	Loop(Loop &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
	/// Closes this loop as the destructor does (so not while it runs),
	/// then takes @o's.
	Loop &operator=(Loop &&o) noexcept
	{
		if (this != &o) {
			close();
			ctx_ = std::exchange(o.ctx_, nullptr);
		}
		return *this;
	}

	/// Stops the loop, runs the posts not yet run, cancels every armed timer
	/// (cancellation callbacks run, once each; what they arm is dropped),
	/// closes the ring and the loop's descriptors (in-flight handlers are
	/// destroyed, not called). From one of the loop's callbacks (a timer,
	/// a post, an I/O handler, a cancellation callback, the exception
	/// handler) it stops the loop at once and does the rest when the run()
	/// or run_once() that called the callback returns: the callbacks due in
	/// the same iteration still run and must not use this Loop (their
	/// LoopTimers work; their arming is dropped). Not from another thread
	/// while the loop runs, nor with the loop run through native_handle().
	~Loop() { close(); }

	/// A one-shot timer running @f @d from now (LoopTimer::arm_in()).
	/// Allocates its block. Throws std::invalid_argument (empty callable:
	/// nothing allocated), std::system_error (the C error), what copying @f
	/// throws, std::logic_error if empty. While ~Loop runs it returns a
	/// timer that is not armed.
	template <class Rep, class Period, class F>
	LoopTimer after(std::chrono::duration<Rep, Period> d, F &&f)
	{
		LoopTimer t = timer(std::forward<F>(f));
		t.arm_in(d);
		return t;
	}
	/// A one-shot timer running @f at loop-clock time @tp; as after().
	template <class F>
	LoopTimer at(time_point tp, F &&f)
	{
		LoopTimer t = timer(std::forward<F>(f));
		t.arm_at(tp);
		return t;
	}
	/// A periodic timer running @f every @period (rounded up to whole ns,
	/// at least the tick: else std::system_error EINVAL), first @period from
	/// now (tw_loop_timer_init_periodic()); as after().
	template <class Rep, class Period, class F>
	LoopTimer every(std::chrono::duration<Rep, Period> period, F &&f, misfire m = misfire::skip,
			schedule s = schedule::fixed_rate)
	{
		const std::uint64_t p = ticks_ceil(period, std::chrono::nanoseconds(1));
		if (p == 0)
			throw std::system_error(EINVAL, std::generic_category(), "tw::Loop::every: zero period");
		const unsigned flags = (s == schedule::fixed_delay ? TW_LOOP_FIXED_DELAY : TW_LOOP_FIXED_RATE) |
				       (m == misfire::once  ? TW_LOOP_MISFIRE_ONCE
					: m == misfire::all ? TW_LOOP_MISFIRE_ALL
							    : TW_LOOP_MISFIRE_SKIP);
		LoopTimer t(get(), std::forward<F>(f), p, flags);
		if (!ctx_->closing) { // ~Loop runs: dropped
			const int r = twheel_loop_add(ctx_->loop, &t.b_->t, p);
			if (r < 0)
				detail::throw_errno(r, "tw::Loop::every");
		}
		return t;
	}
	/// A one-shot timer running @f, not armed; as after().
	template <class F>
	LoopTimer timer(F &&f)
	{
		return LoopTimer(get(), std::forward<F>(f), 0, 0);
	}

	/// Runs @f() on the loop thread at its next iteration
	/// (twheel_loop_post()); what @f throws goes to the exception handler.
	/// Any thread; one allocation. Returns false, and destroys @f uncalled,
	/// once the loop is stopped. A post queued when the loop is destroyed
	/// runs then. Throws std::invalid_argument (empty callable: nothing
	/// allocated or queued), std::bad_alloc, what copying @f throws,
	/// std::logic_error if empty.
	template <class F>
	bool post(F &&f)
	{
		static_assert(std::is_invocable_v<std::decay_t<F> &>, "post() takes a callable invocable as f()");
		detail::loop_ctx *c = get();
		detail::refuse_empty(f, "tw::Loop::post");
		std::unique_ptr<detail::work> it(new detail::work{{}, c, {}});
		it->f.emplace(std::forward<F>(f));
		tw_loop_work_init(&it->w, &detail::work::run);
		const int r = twheel_loop_post(ctx_->loop, &it->w);
		if (r == -ESHUTDOWN)
			return false;
		if (r < 0)
			detail::throw_errno(r, "tw::Loop::post");
		it.release();
		return true;
	}

	/// One I/O request: @prep(io_uring_sqe &) prepares it (any
	/// io_uring_prep_*(); not user_data), called at once on this thread;
	/// @handler(const io_uring_cqe &) gets each completion on the loop
	/// thread, what it throws going to the exception handler. The request
	/// ends with the first CQE without IORING_CQE_F_MORE: a multishot
	/// request (accept, recv, poll...) may end so at any time (the kernel
	/// ends it on a CQ overflow, an error, a cancel), and that last CQE may
	/// still carry a result (an accepted fd, bytes) to handle: submit the
	/// request again to go on. The handler is destroyed after that CQE, or
	/// uncalled by ~Loop. Returns its user_data. Allocates the request.
	/// Throws std::invalid_argument (empty @prep or @handler: nothing
	/// allocated or queued), std::system_error EOPNOTSUPP (fallback mode: the
	/// loop has no ring), EBUSY (queue full), what copying @handler throws
	/// (nothing queued), and what @prep throws (the SQE becomes a no-op,
	/// @handler is never called).
	template <class Prep, class H>
	std::uint64_t submit(Prep &&prep, H &&handler)
	{
		static_assert(std::is_invocable_v<Prep &&, io_uring_sqe &>,
			      "submit() takes a prep invocable as prep(io_uring_sqe &)");
		detail::loop_ctx *c = get();
		detail::refuse_empty(prep, "tw::Loop::submit");
		detail::refuse_empty(handler, "tw::Loop::submit");
		if (twheel_loop_features(c->loop) & TW_LOOP_FEAT_FALLBACK)
			throw std::system_error(EOPNOTSUPP, std::generic_category(),
						"tw::Loop::submit: fallback mode, no io_uring");
		std::unique_ptr<detail::io_op> p(new detail::io_op{{&detail::io_op::complete}, c, {}, false, {}});
		p->h.emplace(std::forward<H>(handler));
		io_uring_sqe *sqe = twheel_loop_get_sqe(c->loop, &p->io);
		if (!sqe)
			throw std::system_error(EBUSY, std::generic_category(), "tw::Loop::submit: queue full");
		detail::io_op *op = p.release();
		tw_list_add(&op->link, &ctx_->io);
		const std::uint64_t key = sqe->user_data;
		try {
			std::forward<Prep>(prep)(*sqe);
		} catch (...) {
			io_uring_prep_nop(sqe);
			sqe->user_data = key;
			op->dead = true;
			throw;
		}
		return key;
	}

	/// twheel_loop_run() until stop(); the calling thread becomes the loop
	/// thread. Throws std::system_error (EBUSY: from a callback). If a
	/// callback destroyed this Loop, it returns once the destruction is
	/// complete (without touching *this).
	void run()
	{
		int r;
		{
			const run_frame f(get());
			r = twheel_loop_run(f.c->loop);
		}
		if (r < 0)
			detail::throw_errno(r, "tw::Loop::run");
	}
	/// One iteration, sleeping only if @wait; returns the callbacks run (0
	/// once stopped). As run() otherwise.
	std::size_t run_once(bool wait = true)
	{
		int r;
		{
			const run_frame f(get());
			r = twheel_loop_run_once(f.c->loop, wait ? 0u : unsigned{TW_LOOP_NOWAIT});
		}
		if (r == -ESHUTDOWN)
			return 0;
		if (r < 0)
			detail::throw_errno(r, "tw::Loop::run_once");
		return static_cast<std::size_t>(r);
	}

	/// Stops the loop after the current iteration, for good. Any thread.
	void stop() noexcept
	{
		if (ctx_)
			twheel_loop_stop(ctx_->loop);
	}
	/// True once stop() was called (or if empty). Any thread.
	bool stopped() const noexcept { return !ctx_ || twheel_loop_stopped(ctx_->loop); }

	/// The loop clock at the start of the current (or last) iteration.
	time_point now() const noexcept { return detail::from_ns(ctx_ ? twheel_loop_now(ctx_->loop) : 0); }
	/// A fresh reading of the loop clock. Any thread.
	time_point clock_now() const noexcept { return detail::from_ns(ctx_ ? twheel_loop_clock(ctx_->loop) : 0); }
	/// The tick. Any thread.
	std::chrono::nanoseconds tick() const noexcept
	{
		return std::chrono::nanoseconds(ctx_ ? static_cast<std::int64_t>(twheel_loop_tick(ctx_->loop)) : 0);
	}
	/// Timers armed on the loop.
	std::size_t size() const noexcept { return ctx_ ? twheel_loop_count(ctx_->loop) : 0; }
	/// The TW_LOOP_FEAT_* in use (twheel_loop_features()): TW_LOOP_FEAT_FALLBACK
	/// in fallback mode, where submit() throws EOPNOTSUPP. 0 if empty. Any
	/// thread.
	unsigned features() const noexcept { return ctx_ ? twheel_loop_features(ctx_->loop) : 0; }

	/// Sets the handler of exceptions escaping callbacks, posts, I/O
	/// handlers and cancellation callbacks; empty restores the default
	/// (print to stderr). While no callback runs.
	void on_exception(exception_handler h) { get()->on_exception = std::move(h); }

	/// The C loop, for calls this class does not wrap. nullptr if empty.
	twheel_loop *native_handle() const noexcept { return ctx_ ? ctx_->loop : nullptr; }

private:
	detail::loop_ctx *get() const
	{
		if (!ctx_)
			throw std::logic_error("tw::Loop used after being moved from");
		return ctx_;
	}

	// A run() or run_once() call: holds the control block, and finishes a
	// ~Loop that a callback called.
	struct run_frame {
		detail::loop_ctx *c;
		explicit run_frame(detail::loop_ctx *ctx) noexcept : c(detail::retain(ctx)) { c->running++; }
		run_frame(const run_frame &) = delete;
		run_frame &operator=(const run_frame &) = delete;
		~run_frame()
		{
			if (--c->running == 0 && c->closing && c->loop)
				finish(c);
			detail::release(c);
		}
	};

	// Stops the loop (arming from the callbacks below is dropped); unless
	// a run frame is below (a callback destroys the loop), finishes now,
	// with ctx_ still set so that the callbacks may call this Loop.
	void close() noexcept
	{
		detail::loop_ctx *c = ctx_;
		if (!c)
			return;
		c->closing = true;
		twheel_loop_stop(c->loop);
		if (c->running == 0)
			finish(c);
		ctx_ = nullptr;
		detail::release(c);
	}

	static void finish(detail::loop_ctx *c) noexcept
	{
		twheel_loop_destroy(
			c->loop,
			[](tw_loop_timer *t, void *) {
				auto *n = reinterpret_cast<detail::loop_timer_node *>(t);
				if (n->dropped)
					n->dropped(n);
			},
			nullptr, nullptr);
		c->loop = nullptr;
		while (!tw_list_empty(&c->io)) {
			tw_list *l = c->io.next;
			tw_list_del(l);
			delete tw_list_entry(l, detail::io_op, link);
		}
	}

	detail::loop_ctx *ctx_ = nullptr;

	template <class, class>
	friend class LoopTimerHook;
};

/// An intrusive one-shot timer on a Loop, for an object that stays at one
/// address (a connection record): derive from it and its C timer (a struct
/// tw_loop_timer) is part of the object, so making, arming, firing and
/// cancelling it allocate nothing. At its deadline the loop calls
/// Derived::on_timer(), or on_timer(Tag{}) so that one object can hold
/// several hooks; it may destroy the object (as the C loop allows: a
/// one-shot timer is idle once its callback starts); what it throws goes
/// to the Loop's exception handler. Neither copyable nor movable (the loop
/// keeps its address). Destroying it cancels it. ~Loop drops it uncalled
/// (no cancellation callback); from then on operator bool is false,
/// cancel() and the destructor do nothing and arming throws
/// std::logic_error. The loop thread only. 112 bytes on LP64: the C timer,
/// a null pointer that tells ~Loop it is a hook, and the Loop's control
/// block, which it keeps alive.
template <class Derived, class Tag = void>
class LoopTimerHook {
public:
	using time_point = std::chrono::steady_clock::time_point;

	/// Bound to @loop, not armed. O(1). Throws std::logic_error if @loop
	/// was moved from.
	explicit LoopTimerHook(Loop &loop) : ctx_(detail::retain(loop.get()))
	{
		tw_loop_timer_init(&n_.t, &fire, 0); // cannot fail: a timer, a callback, no flags
	}
	LoopTimerHook(const LoopTimerHook &) = delete;
	LoopTimerHook &operator=(const LoopTimerHook &) = delete;
	/// Cancels it (from its own on_timer() too).
	~LoopTimerHook()
	{
		cancel();
		detail::release(ctx_);
	}

	/// twheel_loop_mod() with @d rounded up to whole ns: armed whether or
	/// not it was, true if it was. O(1), no allocation, no system call.
	/// While its Loop is being destroyed the arming is dropped (false).
	/// Throws std::logic_error once the loop is gone, std::system_error
	/// with the C error (ESHUTDOWN once the loop is stopped).
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		return detail::arm_timer(ctx_, &n_.t, twheel_loop_mod, ticks_ceil(d, std::chrono::nanoseconds(1)),
					 "tw::LoopTimerHook::arm_in");
	}
	/// twheel_loop_mod_at() at loop-clock time @tp; as arm_in().
	bool arm_at(time_point tp)
	{
		return detail::arm_timer(ctx_, &n_.t, twheel_loop_mod_at, detail::to_ns(tp), "tw::LoopTimerHook::arm_at");
	}
	/// twheel_loop_del(): true if it was armed. O(1).
	bool cancel() noexcept { return ctx_->loop && twheel_loop_del(ctx_->loop, &n_.t) == 1; }

	/// Armed on the loop (false inside its own on_timer()).
	bool pending() const noexcept { return ctx_->loop && twheel_loop_pending(ctx_->loop, &n_.t); }
	/// The deadline it is (or was last) armed for.
	time_point deadline() const noexcept { return detail::from_ns(n_.t.deadline); }
	/// Its loop still exists.
	explicit operator bool() const noexcept { return ctx_->loop != nullptr; }
	/// The C timer (read-only).
	const tw_loop_timer *native_handle() const noexcept { return &n_.t; }

private:
	static void fire(tw_loop_timer *t) noexcept
	{
		auto *h = reinterpret_cast<LoopTimerHook *>(reinterpret_cast<detail::loop_timer_node *>(t));
		const detail::loop_ctx *c = h->ctx_; // kept alive by the running Loop, if on_timer() destroys *h
		auto call = [d = static_cast<Derived *>(h)] {
			if constexpr (std::is_void_v<Tag>)
				d->on_timer();
			else
				d->on_timer(Tag{});
		};
		detail::guarded(c->on_exception, call);
	}

	detail::loop_timer_node n_{{}, nullptr}; // first: the C node leads back here
	detail::loop_ctx *ctx_;
};

} // namespace tw

#endif // TWHEEL_LOOP_HPP
