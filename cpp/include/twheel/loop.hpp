// SPDX-License-Identifier: MIT
//
// twheel/loop.hpp - tw::Loop, the owner over the io_uring event loop
// (struct twheel_loop; <twheel/loop.h> states each call's semantics,
// errors and threads): timers (tw::Timer<tw::Loop>, tw::Hook<tw::Loop, D>
// of <twheel/timer.hpp>), posts from any thread, I/O requests. Time is the
// loop clock as a steady_clock::time_point. All on the loop thread except
// the calls marked "Any thread". Header-only, C++17, link with
// twheel-uring; docs/cpp.md is the manual.
#ifndef TWHEEL_LOOP_HPP
#define TWHEEL_LOOP_HPP

#include <twheel/timer.hpp>

#include <liburing.h> // submit() prepares SQEs; C++ compilers define _GNU_SOURCE
#include <twheel/loop.h>

#include <atomic>
#include <thread>

namespace tw {

/// struct twheel_loop_config; zeros mean the C defaults.
struct loop_options {
	std::chrono::nanoseconds tick = std::chrono::milliseconds(1); ///< 1 us .. 1 s; 0: 1 ms
	unsigned entries = 0;                                         ///< SQ entries
	unsigned batch = 0;                                           ///< posts per iteration
	unsigned flags = 0;                                           ///< raw C config flags
	/// The loop clock, empty (a null function pointer makes it empty too)
	/// for CLOCK_MONOTONIC. Copied by the Loop. Called from any thread;
	/// monotonic, never before the epoch (the loop's time is unsigned: an
	/// earlier reading is the epoch, where a deadline before it is due);
	/// must not throw (it would cross a C frame: terminate).
	std::function<std::chrono::steady_clock::time_point()> clock;
};

namespace detail {

// What a Loop shares with its timers and requests: the clock, the I/O
// requests in flight and those done, kept for reuse (~Loop frees both).
struct loop_ctx : ctx {
	std::function<std::chrono::steady_clock::time_point()> clock;
	tw_list io, spare;
	std::atomic<std::thread::id> thread{}; // the last to run it (or spawn on it): co.hpp's
	twheel_loop *loop() const noexcept { return static_cast<twheel_loop *>(c); }
	bool on_thread() const noexcept { return thread.load(std::memory_order_relaxed) == std::this_thread::get_id(); }
	void on_this_thread() noexcept // written only when it changes: read from any thread
	{
		if (!on_thread())
			thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
	}
};

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

// One I/O request of Loop::submit() or co::io: in loop_ctx::io from its
// SQE to its last CQE (one without IORING_CQE_F_MORE), then in
// loop_ctx::spare for the next request: the steady state allocates nothing.
struct io_op {
	tw_loop_io io; // first: the C request leads back here
	loop_ctx *ctx;
	tw_list link;
	fn<32, const io_uring_cqe &> h; // empty: never called again
	tw_loop_deadline *dl = nullptr; // made once; a raw pointer keeps io_op standard-layout

	~io_op() { delete dl; }

	// Loop::submit() on @c, with @deadline in ns (or none), but its errors
	// returned: nullptr and @err (-ESHUTDOWN: a stopped or gone loop, whose
	// ring would never see the SQE; -EOPNOTSUPP, -EBUSY, the deadline's;
	// -EINVAL: @prep set user_data, which leads the loop back to the record).
	template <class Prep, class H>
	static io_op *start(loop_ctx *c, Prep &&prep, H &&h, const std::uint64_t *deadline, int &err)
	{
		if (!c->c || twheel_loop_stopped(c->loop()))
			return err = -ESHUTDOWN, nullptr;
		if (twheel_loop_features(c->loop()) & TW_LOOP_FEAT_FALLBACK)
			return err = -EOPNOTSUPP, nullptr;
		io_op *op = take(c);
		io_uring_sqe *sqe = nullptr;
		std::uint64_t key = 0;
		try {
			op->h.emplace(std::forward<H>(h));
			if (deadline && !op->dl)
				op->dl = new tw_loop_deadline{};
			if (!(sqe = twheel_loop_get_sqe(c->loop(), &op->io))) {
				op->put();
				return err = -EBUSY, nullptr;
			}
			key = sqe->user_data;
			std::forward<Prep>(prep)(*sqe);
			err = sqe->user_data != key ? -EINVAL
			      : deadline	    ? twheel_loop_io_deadline(c->loop(), sqe, op->dl, *deadline)
						    : 0;
			if (!err)
				return op;
		} catch (...) {
			sqe ? op->drop(sqe, key) : op->put();
			throw;
		}
		op->drop(sqe, key); // the SQE was left as it was
		return nullptr;
	}

	static void complete(tw_loop_io *io, const io_uring_cqe *cqe) noexcept
	{
		auto *op = reinterpret_cast<io_op *>(io);
		if (op->h)
			guarded(op->ctx->on_exception, op->h, *cqe);
		if (!(cqe->flags & IORING_CQE_F_MORE))
			op->put();
	}

private:
	// A spare request of @c's, or a new one; in c->io.
	static io_op *take(loop_ctx *c)
	{
		io_op *op;
		if (tw_list_empty(&c->spare)) {
			op = new io_op{{&complete}, c, {}, {}};
		} else {
			op = tw_list_entry(c->spare.next, io_op, link);
			tw_list_del(&op->link);
		}
		tw_list_add(&op->link, &c->io);
		return op;
	}
	void put() noexcept
	{
		h.reset();
		tw_list_del(&link);
		tw_list_add(&link, &ctx->spare);
	}
	// Makes @sqe a no-op whose CQE ends this request.
	void drop(io_uring_sqe *sqe, std::uint64_t key) noexcept
	{
		io_uring_prep_nop(sqe);
		sqe->user_data = key;
		h.reset();
	}
};

} // namespace detail

/// An io_uring event loop driving a timer wheel. Move-only; timers and
/// I/O keep working across a move. Destroyed by the rule of every owner
/// (detail::owner), and more: stops the loop, waits for the post() and
/// stop() calls of other threads still under way (the loop may have run
/// what they posted), runs the posts not yet run, cancels the armed
/// timers, closes the ring (in-flight handlers destroyed uncalled). From
/// a callback the loop stops at once, and the callbacks due in that
/// iteration must not use this Loop. Not from another thread, nor with the
/// loop run through native_handle().
class Loop : public detail::owner<Loop, detail::loop_ctx> {
public:
	using time_point = std::chrono::steady_clock::time_point;

	/// twheel_loop_create(): io_uring mode, or fallback mode (timers and
	/// posts, no I/O: features() has TW_LOOP_FEAT_FALLBACK). Throws
	/// tw::error with the C error and explanation, what copying
	/// @opt.clock throws, std::bad_alloc. Nothing leaks on a throw.
	explicit Loop(const loop_options &opt = loop_options())
	{
		std::unique_ptr<detail::loop_ctx> c(new detail::loop_ctx);
		tw_list_init(&c->io);
		tw_list_init(&c->spare);
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
				return detail::tp_ns(static_cast<detail::loop_ctx *>(arg)->clock());
			};
			cfg.clock_arg = c.get();
		}
		char msg[256] = "";
		twheel_loop *l = nullptr;
		if (const int r = twheel_loop_create(&l, &cfg, msg, sizeof msg); r < 0)
			throw error(-r, std::string("tw::Loop: ") + msg);
		c->c = l;
		ctx_ = c.release();
	}

	/// Runs @f() on the loop thread at its next iteration (twheel_loop_post(),
	/// or when the loop is destroyed); what @f throws goes to the exception
	/// handler. Any thread; one allocation, two for an @f too large for
	/// the work item. False (@f destroyed uncalled) once the loop is
	/// stopped. Throws tw::error (then nothing is queued).
	template <class F>
	bool post(F &&f)
	{
		static_assert(std::is_invocable_v<std::decay_t<F> &>, "post() takes a callable invocable as f()");
		detail::loop_ctx *c = checked();
		detail::refuse_empty(f);
		std::unique_ptr<detail::work> it(new detail::work{{}, c, {}});
		it->f.emplace(std::forward<F>(f));
		tw_loop_work_init(&it->w, &detail::work::run);
		const int r = twheel_loop_post(c->loop(), &it->w);
		if (r == -ESHUTDOWN)
			return false;
		if (r < 0)
			detail::fail(r, "tw: twheel_loop_post() failed");
		it.release();
		return true;
	}

	/// One I/O request: @prep(io_uring_sqe &) prepares it at once (not
	/// user_data); @handler(const io_uring_cqe &) gets each CQE on the loop
	/// thread, up to the first without IORING_CQE_F_MORE (a multishot
	/// request may end so at any time, with a result). Returns its
	/// user_data. Allocates only while every request record is in use, or
	/// for a @handler too large for the record. Throws tw::error:
	/// ESHUTDOWN (stopped), EOPNOTSUPP (fallback mode), EBUSY (queue full),
	/// nothing queued; EINVAL (@prep set user_data), what @prep throws (the
	/// SQE becomes a no-op, @handler never runs).
	template <class Prep, class H>
	std::uint64_t submit(Prep &&prep, H &&handler)
	{
		return submit_(std::forward<Prep>(prep), std::forward<H>(handler), nullptr);
	}
	/// submit() with a deadline on the loop clock (twheel_loop_io_deadline()):
	/// a single-shot request not complete at @deadline is cancelled, never
	/// earlier, and @handler gets res -ETIME. Throws as submit(), and
	/// tw::error EINVAL (a multishot request, or @prep took an SQE of its
	/// own: the request's must be the last), ENOSPC or ESHUTDOWN.
	/// @deadline: any duration of the loop clock, rounded up to whole ns;
	/// of another clock, a static_assert says how to convert it.
	template <class Prep, class H>
	std::uint64_t submit(Prep &&prep, time_point deadline, H &&handler)
	{
		return submit_(std::forward<Prep>(prep), std::forward<H>(handler), &deadline);
	}
	template <class Prep, class Clock, class Dur, class H>
	std::uint64_t submit(Prep &&prep, std::chrono::time_point<Clock, Dur> deadline, H &&handler)
	{
		static_assert(std::is_same_v<Clock, time_point::clock>,
			      "tw: submit() takes a deadline of the loop clock (std::chrono::steady_clock): "
			      "convert one of another clock, clock_now() + (tp - Clock::now())");
		const time_point at = detail::ns_tp<time_point>(detail::tp_ns(deadline));
		return submit_(std::forward<Prep>(prep), std::forward<H>(handler), &at);
	}

	/// twheel_loop_run() until stop(); the calling thread becomes the loop
	/// thread. Throws tw::error: EBUSY from a callback, io_uring_enter()'s
	/// error. A callback destroyed this Loop: returns then, not touching it.
	void run()
	{
		if (const int r = in_run([](detail::loop_ctx *c) { return c->on_this_thread(), twheel_loop_run(c->loop()); });
		    r < 0)
			detail::fail(r, r == -EBUSY ? "tw: run() from a callback" : "tw: twheel_loop_run() failed");
	}
	/// One iteration, sleeping only if @wait; returns the callbacks run (a
	/// timer skipping late deadlines too; 0 once stopped). As run() otherwise.
	std::size_t run_once(bool wait = true)
	{
		const unsigned flags = wait ? 0u : unsigned{TW_LOOP_NOWAIT};
		const int r = in_run([&](detail::loop_ctx *c) { return c->on_this_thread(), twheel_loop_run_once(c->loop(), flags); });
		if (r == -ESHUTDOWN)
			return 0;
		if (r < 0)
			detail::fail(r, r == -EBUSY ? "tw: run_once() from a callback" : "tw: twheel_loop_run_once() failed");
		return static_cast<std::size_t>(r);
	}

	/// Stops the loop after the current iteration, for good. Any thread.
	void stop() noexcept { stopping(ctx_); }
	/// True once stop() was called (or if empty). Any thread.
	bool stopped() const noexcept { return !ctx_ || twheel_loop_stopped(ctx_->loop()); }
	/// The loop clock at the start of the current (or last) iteration.
	time_point now() const noexcept { return detail::ns_tp<time_point>(ctx_ ? twheel_loop_now(ctx_->loop()) : 0); }
	/// A fresh reading of the loop clock. Any thread.
	time_point clock_now() const noexcept { return detail::ns_tp<time_point>(ctx_ ? twheel_loop_clock(ctx_->loop()) : 0); }
	/// The tick. Any thread.
	std::chrono::nanoseconds tick() const noexcept { return detail::ns_dur(ctx_ ? twheel_loop_tick(ctx_->loop()) : 0); }
	/// Timers armed on the loop.
	std::size_t size() const noexcept { return ctx_ ? twheel_loop_count(ctx_->loop()) : 0; }
	/// The TW_LOOP_FEAT_* in use (0 if empty). Any thread.
	unsigned features() const noexcept { return ctx_ ? twheel_loop_features(ctx_->loop()) : 0; }
	/// The C loop, for calls this class does not wrap. nullptr if empty.
	twheel_loop *native_handle() const noexcept { return ctx_ ? ctx_->loop() : nullptr; }

private:
	template <class Prep, class H>
	std::uint64_t submit_(Prep &&prep, H &&handler, const time_point *deadline)
	{
		static_assert(std::is_invocable_v<Prep &&, io_uring_sqe &>,
			      "submit() takes a prep invocable as prep(io_uring_sqe &)");
		detail::loop_ctx *c = checked();
		detail::refuse_empty(prep);
		detail::refuse_empty(handler);
		const std::uint64_t ns = deadline ? detail::tp_ns(*deadline) : 0;
		int err;
		if (auto *op = detail::io_op::start(c, std::forward<Prep>(prep), std::forward<H>(handler),
						     deadline ? &ns : nullptr, err))
			return reinterpret_cast<std::uintptr_t>(&op->io);
		detail::fail(err, err == -EOPNOTSUPP ? "tw: fallback mode, no io_uring"
			     : err == -EBUSY       ? "tw: the submission queue is full"
			     : err == -EINVAL      ? "tw: prep set user_data, or a deadline on a multishot request"
						   : "tw: twheel_loop_io_deadline() failed");
	}

	static void stopping(detail::loop_ctx *c) noexcept
	{
		if (c)
			twheel_loop_stop(c->loop());
	}
	static void finish(detail::ctx *x) noexcept
	{
		auto *c = static_cast<detail::loop_ctx *>(x);
		twheel_loop_destroy(c->loop(), &detail::drained<tw_loop_timer>, nullptr, c);
		c->c = nullptr;
		tw_list_splice_tail_init(&c->spare, &c->io);
		while (!tw_list_empty(&c->io)) {
			tw_list *l = c->io.next;
			tw_list_del(l);
			delete tw_list_entry(l, detail::io_op, link);
		}
	}

	friend class detail::owner<Loop, detail::loop_ctx>;
	friend struct detail::ops<Loop>;
};

namespace detail {

// The C calls behind Timer<Loop> and Hook<Loop, D>: one-shot C timers
// (periodic ones re-arm from timer.hpp), idle while their callback runs.
template <>
struct ops<Loop> {
	using node = tw_loop_timer;
	static twheel_loop *l(const ctx *c) noexcept { return static_cast<twheel_loop *>(c->c); }
	static ctx *share(Loop &o) { return retain(o.checked()); }
	static ctx *peek(const Loop &o) noexcept { return o.ctx_; } // not retained: any thread
	static constexpr void (*finish)(ctx *) noexcept = &Loop::finish; // co::spawn()'s run
	static void init(node *n, void (*fire)(node *)) noexcept { tw_loop_timer_init(n, fire, 0); }
	template <class T>
	static bool open(const ctx *c, T) noexcept { return !c->closing; }
	template <class T>
	static int mod_at(ctx *c, node *n, T t) noexcept { return twheel_loop_mod_at(l(c), n, ns_ceil(t)); }
	template <class T>
	static int mod_in(ctx *c, node *n, T t) noexcept { return twheel_loop_mod(l(c), n, ns_ceil(t)); }
	static bool del(ctx *c, node *n) noexcept { return twheel_loop_del(l(c), n) == 1; }
	static bool pending(const ctx *c, const node *n) noexcept { return twheel_loop_pending(l(c), n); }
	static std::uint64_t expiry(const ctx *, const node *n) noexcept { return n->deadline; }
	// a fresh reading, as an AsioHost's: the iteration's time may be long
	// past (every() outside a run, the end of a fixed_delay run)
	static std::uint64_t now(const ctx *c) noexcept { return twheel_loop_clock(l(c)); }
	static std::uint64_t tick(const ctx *c) noexcept { return twheel_loop_tick(l(c)); }
	// twheel_loop_move(): a pending one stays pending at dst (a stopped
	// loop cancels it later, as any other)
	static void move(ctx *c, node *dst, node *src) noexcept
	{
		init(dst, src->func);
		twheel_loop_move(c ? l(c) : nullptr, dst, src);
	}
};

} // namespace detail

/// Deprecated names, removed at 2.0 (docs/cpp.md, "Migrating").
using LoopTimer [[deprecated("use tw::Timer<tw::Loop>")]] = Timer<Loop>;
template <class D, class Tag = void>
using LoopTimerHook [[deprecated("use tw::Hook<tw::Loop, D, Tag>")]] = Hook<Loop, D, Tag>;

} // namespace tw

#endif // TWHEEL_LOOP_HPP
