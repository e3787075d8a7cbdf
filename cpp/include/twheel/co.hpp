// SPDX-License-Identifier: MIT
//
// twheel/co.hpp - C++20 coroutines on tw::Loop (opt-in; C++17 programs do
// not include it): tw::co::task<T>, spawn(), and the awaitables
// sleep_for()/sleep_until(), io() and resume_on() ([[nodiscard]]: a
// forgotten co_await is a warning). Header-only over <twheel/loop.hpp>;
// nothing allocated beyond the frames (and resume_on()'s work item).
// Lifetime: a task spawned on a loop is owned by it; its frame is freed
// when it ends, or destroyed where it is suspended when the Loop is
// destroyed first (destructors run, nothing leaks); its exception goes to
// Loop::on_exception(), as does what resuming a coroutine of another type
// throws (its unhandled_exception() rethrows). Nothing resumes a coroutine once its Loop is
// destroyed (from a callback: in the rest of that iteration too), so that
// it never runs on with a dangling Loop &. A spawned task resumed by anything but
// its Loop (another Loop's awaitable, another library's) must not destroy
// that Loop: it would destroy the running frame; one that ends on another thread
// (another Loop's) has its end posted to its own Loop (stopped: ~Loop ends it);
// its Loop must not be destroyed while it is on
// another thread (~Loop would destroy the frame that thread runs). A task object destroyed while its coroutine is
// suspended destroys the frame; what it waits on is cancelled then. A
// task whose awaiting coroutine is destroyed goes on, and resumes nothing.
// Destroy neither while the task is on another thread (what it waits on there, or
// its end, would race the destruction).
// Threads: everything on the loop thread, except awaiting resume_on().
#ifndef TWHEEL_CO_HPP
#define TWHEEL_CO_HPP

#if !defined(__cpp_impl_coroutine) || __cpp_impl_coroutine < 201902L
#error "<twheel/co.hpp> needs C++20 coroutines (-std=c++20)"
#endif

#include <twheel/loop.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <coroutine>

namespace tw::co {

template <class T = void>
class task;

namespace detail {

// Keeps a detached task tied to its loop: armed at the end of time, it is
// cancelled when the Loop is destroyed (on_cancel: the frame goes). Its
// end frees the frame, then hands @error to the loop's handler, on the
// loop thread: a task that ends on another posts its end there, or (the
// loop stopped) leaves it to ~Loop's cancel.
struct anchor : tw::Hook<tw::Loop, anchor> {
	std::coroutine_handle<> frame;
	std::exception_ptr *error = nullptr; // the promise's
	struct hop {
		tw_loop_work w; // first: the C node leads back here
		anchor *a;
	} post{{}, this};
	explicit anchor(tw::Loop &l) : Hook(l) {}
	tw::detail::loop_ctx *ctx() const noexcept { return static_cast<tw::detail::loop_ctx *>(c_); }
	void on_timer() noexcept {} // never: the end of time does not come
	void on_cancel() noexcept { finish(); }
	void end() noexcept
	{
		tw::detail::loop_ctx *c = ctx();
		if (!c->on_thread() && c->c) {
			tw_loop_work_init(&post.w, [](tw_loop_work *w) noexcept { reinterpret_cast<hop *>(w)->a->finish(); });
			(void)twheel_loop_post(c->loop(), &post.w); // refused: stopped, ~Loop's cancel ends it
			return;
		}
		finish();
	}
	void finish() noexcept // destroys *this too
	{
		tw::detail::loop_ctx *c = ctx();
		tw::detail::retain(c);
		std::exception_ptr e = std::move(*error);
		frame.destroy(); // and *this
		if (e) {
			auto rethrow = [&e] { std::rethrow_exception(e); };
			tw::detail::guarded(c->on_exception, rethrow);
		}
		tw::detail::release(c);
	}
};

// This thread's innermost trampoline: what it resumes, and the task its running coroutine
// awaits or the awaiter of a task ending in it, run from its loop: a flat stack however deep
// (symmetric transfer needs tail calls, which GCC leaves out without -O2 or with ASan).
// One a co_await makes stops when its @top ends.
struct promise_base;
struct trampoline {
	static inline thread_local trampoline *cur = nullptr;
	std::coroutine_handle<> next, running;
	const promise_base *top; // null once it has ended
	trampoline *up = std::exchange(cur, this);
	explicit trampoline(std::coroutine_handle<> h, const promise_base *t = nullptr) noexcept : next(h), top(t) {}
	~trampoline() { cur = up; }
	void run()
	{
		while (next)
			(running = std::exchange(next, {})).resume();
	}
};
inline void resume(std::coroutine_handle<> h) { trampoline(h).run(); }

// What every task's promise shares: the awaiter to resume when it ends
// (null until one awaits it) and its flag set if this frame goes first,
// the exception it ended with, and, when detached, the loop's anchor.
struct promise_base {
	std::coroutine_handle<> cont;
	bool *gone = nullptr;
	std::exception_ptr error;
	std::optional<anchor> anch; // detached
	~promise_base()
	{
		if (gone)
			*gone = true;
	}

	std::suspend_always initial_suspend() noexcept { return {}; }
	struct final_awaiter {
		bool await_ready() noexcept { return false; }
		template <class P>
		std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept
		{
			promise_base &p = h.promise();
			if (p.anch)
				p.anch->end(); // detached
			else if (trampoline *t = trampoline::cur; !t || t->running != h)
				return p.cont ? p.cont : std::noop_coroutine(); // another library's: symmetric transfer; none: released
			else if (t->top == &p)
				t->top = nullptr;
			else
				t->next = p.cont;
			return std::noop_coroutine();
		}
		void await_resume() noexcept {}
	};
	final_awaiter final_suspend() noexcept { return {}; }
	void unhandled_exception() noexcept { error = std::current_exception(); }
};

// What a task<T> returns: a T (a reference: kept as a pointer), or
// nothing for task<void>.
template <class T>
struct returns {
	static constexpr bool ref = std::is_reference_v<T>;
	std::optional<std::conditional_t<ref, std::remove_reference_t<T> *, T>> value;
	template <class U = T> // T: co_return {a, b} too
	void return_value(U &&v)
	{
		if constexpr (ref) {
			T r = std::forward<U>(v); // binds as a return statement would
			value.emplace(std::addressof(r));
		} else {
			value.emplace(std::forward<U>(v));
		}
	}
	T take()
	{
		if constexpr (ref)
			return static_cast<T>(**value);
		else
			return std::move(*value);
	}
};
template <>
struct returns<void> {
	void return_void() noexcept {}
};

template <class T>
struct promise : promise_base, returns<T> {
	task<T> get_return_object() noexcept { return task<T>(std::coroutine_handle<promise>::from_promise(*this)); }
};

} // namespace detail

/// A lazy coroutine returning T: it starts when awaited (or spawned).
/// Move-only; destroying a task whose coroutine has not finished destroys
/// its frame (a timer it waits on is disarmed).
template <class T>
class [[nodiscard("tw: a task runs only when awaited or spawned")]] task {
public:
	using promise_type = detail::promise<T>;
	using handle = std::coroutine_handle<promise_type>;

	task() noexcept = default;
	explicit task(handle h) noexcept : h_(h) {}
	task(task &&o) noexcept : h_(std::exchange(o.h_, {})) {}
	task &operator=(task o) noexcept { return std::swap(h_, o.h_), *this; }
	~task()
	{
		if (h_)
			h_.destroy();
	}

	/// True once the coroutine has finished.
	bool done() const noexcept { return !h_ || h_.done(); }

	struct awaiter {
		handle h;
		bool mine = false, gone = false; // this co_await started the task; its frame went
		awaiter(handle x) noexcept : h(x) {}
		awaiter(const awaiter &) = delete;
		~awaiter() // the awaiting frame goes (first?): the task must not resume it
		{
			if (!mine || gone)
				return;
			h.promise().gone = nullptr;
			if (!h.done())
				h.promise().cont = std::noop_coroutine();
		}
		// empty, or awaited already: await_resume() throws
		bool await_ready() noexcept { return !h || h.promise().cont; }
		// Hands the task to the trampoline running @c, a task (its resume() throws nothing), else
		// runs it here until it suspends or ends; then *this may be gone (the task destroyed
		// this frame, or it went on on another thread).
		template <class P>
		bool await_suspend(std::coroutine_handle<P> c) noexcept
		{
			mine = true;
			h.promise().cont = c, h.promise().gone = &gone;
			if (detail::trampoline *t = detail::trampoline::cur; std::is_base_of_v<detail::promise_base, P> && t && t->running == c)
				return t->next = h, true;
			const detail::promise_base *p = &h.promise();
			detail::trampoline here(h, p);
			here.run();
			return here.top || p->cont != c; // ended: ~awaiter() may have made it a no-op
		}
		T await_resume()
		{
			if (!h)
				throw tw::error(EINVAL, "tw: the task is empty");
			if (!mine)
				throw tw::error(EINVAL, "tw: the task was awaited already");
			if (h.promise().error)
				std::rethrow_exception(h.promise().error);
			if constexpr (!std::is_void_v<T>)
				return h.promise().take();
		}
	};
	/// Runs the task until it ends; returns its value or rethrows its
	/// exception. Throws tw::error (EINVAL) for an empty (default-made,
	/// moved-from or released) task, or one awaited already (a task is
	/// awaited once: its value is moved out).
	awaiter operator co_await() && noexcept { return {h_}; }

	/// Releases the frame to the caller (spawn() uses it), who destroys it;
	/// resumed by hand, it ends at its final suspend point (done()).
	handle release() noexcept { return std::exchange(h_, {}); }

private:
	template <class U>
	friend void spawn(tw::Loop &, task<U>);
	handle h_;
};

/// Detaches @t on @loop and starts it now, on this (the loop) thread: it
/// runs until its first suspension, then from the loop, which owns it (see
/// Lifetime above); until it ends it counts as one timer in loop.size().
/// What it throws goes to on_exception(), from inside spawn() if before its
/// first suspension. Nothing allocated beyond the frame. A Loop destroyed before it first
/// suspends closes once it does, as from a callback. Throws tw::error (a
/// moved-from or stopped Loop; EINVAL for a task being awaited, which goes
/// with @t). While the Loop is being destroyed (from a post or a
/// cancellation callback it runs), or if @t has ended, @t is destroyed unstarted.
template <class T>
void spawn(tw::Loop &loop, task<T> t)
{
	if (t.done()) // empty, or ended already
		return;
	auto &p = t.h_.promise();
	if (p.cont)
		throw tw::error(EINVAL, "tw: the task was awaited already");
	p.anch.emplace(loop);
	p.anch->frame = t.h_, p.anch->error = &p.error;
	p.anch->arm_at(tw::Loop::time_point::max()); // a throw, or an arm dropped while the
	if (p.anch->pending()) {                     // Loop is destroyed: t destroys the frame
		// one run of the Loop: one destroyed in it closes once the frame suspends
		const tw::detail::run_frame fr(p.anch->ctx(), tw::detail::ops<tw::Loop>::finish);
		p.anch->ctx()->on_this_thread(); // the loop thread, by the contract
		detail::resume(t.release());
	}
}

/// Awaits the loop clock reaching @tp: resumes on the loop thread in the
/// first iteration at or after it (never before; at most a tick plus
/// scheduling noise after, as every loop timer). @tp: any duration of the
/// loop clock (steady_clock), rounded up to whole ns as arm_at()'s; of
/// another clock, a static_assert says how to convert it. A Hook in the frame:
/// O(1), nothing allocated. Destroying the frame meanwhile disarms it.
/// Throws tw::error from await_suspend: ESHUTDOWN once the loop is stopped,
/// EINVAL while another coroutine awaits it (made on a moved-from Loop:
/// EINVAL, as every call on it).
class [[nodiscard("tw: an awaitable does nothing unless awaited: co_await it")]] sleep_until : tw::Hook<tw::Loop, sleep_until> {
public:
	sleep_until(tw::Loop &loop, tw::Loop::time_point tp) : Hook(loop), tp_(tp) {} // and {}
	template <class Clock, class Dur>
	sleep_until(tw::Loop &loop, std::chrono::time_point<Clock, Dur> tp)
		: Hook(loop), tp_(tw::detail::ns_tp<tw::Loop::time_point>(tw::detail::tp_ns(tp)))
	{
		static_assert(std::is_same_v<Clock, tw::Loop::time_point::clock>,
			      "tw: sleep_until() takes a time point of the loop clock (std::chrono::steady_clock): "
			      "convert one of another clock, loop.clock_now() + (tp - Clock::now()), or use sleep_for()");
	}
	bool await_ready() const noexcept { return false; }
	void await_suspend(std::coroutine_handle<> h)
	{
		if (pending()) // another coroutine awaits it
			throw tw::error(EINVAL, "tw: the awaitable is awaited already");
		h_ = h;
		arm_at(tp_);
	}
	void await_resume() const noexcept {}
	void on_timer() // what resume() throws (a coroutine type rethrowing) goes to the loop's handler
	{
		if (!c_->closing) // else the Loop went in this iteration: the frame goes with its task
			detail::resume(h_);
	}

private:
	friend class tw::Hook<tw::Loop, sleep_until>;
	tw::Loop::time_point tp_;
	std::coroutine_handle<> h_;
};

/// Awaits @d (rounded up to whole ns; negative: 0; past the clock's end:
/// saturated, never wrapped) after the loop clock now; as sleep_until.
template <class Rep, class Period>
sleep_until sleep_for(tw::Loop &loop, std::chrono::duration<Rep, Period> d)
{
	const std::uint64_t at = tw::detail::add_sat(tw::detail::tp_ns(loop.clock_now()), tw::detail::ns_ceil(d));
	return sleep_until(loop, tw::detail::ns_tp<tw::Loop::time_point>(at));
}

/// Awaited on any thread: the coroutine goes on on @loop's thread, at its
/// next iteration (twheel_loop_post() of one allocated work item). A frame
/// destroyed (on the loop thread) before then is not resumed: the loop
/// frees the item; nor is one whose loop was stopped meanwhile. Throws tw::error from await_suspend (the coroutine
/// then goes on here): ESHUTDOWN once the loop is stopped, EINVAL for a
/// moved-from Loop; std::bad_alloc. Made on any thread, it does not hold
/// @loop: one kept past the Loop's destruction must not be awaited (use after free).
class [[nodiscard("tw: an awaitable does nothing unless awaited: co_await it")]] resume_on {
public:
	explicit resume_on(tw::Loop &loop) noexcept : c_(static_cast<tw::detail::loop_ctx *>(tw::detail::ops<tw::Loop>::peek(loop))) {}
	resume_on(const resume_on &) = delete;
	resume_on &operator=(const resume_on &) = delete;
	~resume_on()
	{
		if (w_)
			w_->h = {};
	}
	bool await_ready() const noexcept { return false; }
	void await_suspend(std::coroutine_handle<> h)
	{
		if (!c_)
			tw::detail::fail(tw::detail::misuse::owner_moved);
		w_ = new work{{}, h, this, c_};
		tw_loop_work_init(&w_->w, &run);
		if (const int r = twheel_loop_post(c_->loop(), &w_->w); r < 0) {
			delete std::exchange(w_, nullptr);
			tw::detail::fail(r, "tw: twheel_loop_post() failed");
		} // else *this may be gone already: the loop thread resumed the frame
	}
	void await_resume() const noexcept {}

private:
	struct work {
		tw_loop_work w; // first: the C node leads back here
		std::coroutine_handle<> h;
		resume_on *self;
		tw::detail::loop_ctx *c; // alive while the loop runs its posts
	};
	static void run(tw_loop_work *w) noexcept
	{
		const std::unique_ptr<work> it(reinterpret_cast<work *>(w));
		if (!it->h)
			return;
		it->self->w_ = nullptr;
		if (!twheel_loop_stopped(it->c->loop())) // else run by ~Loop: the frame goes with its task
			tw::detail::guarded(it->c->on_exception, detail::resume, it->h); // as sleep_until
	}
	tw::detail::loop_ctx *c_;
	work *w_ = nullptr;
};

namespace detail {
inline void ignore_cqe(tw_loop_io *, const io_uring_cqe *) noexcept {}
inline tw_loop_io ignored_io{&ignore_cqe};
} // namespace detail

/// co_await io(loop, prep, deadline): one single-shot I/O request on @loop,
/// prepared by @prep(io_uring_sqe &) (not user_data). Resumes on the loop
/// thread with cqe->res, or -ETIME when @deadline (the loop clock; none:
/// time_point::max()) passed first and cancelled the request, never
/// before (twheel_loop_io_deadline()). @deadline: any duration of the loop
/// clock, rounded up to whole ns as sleep_until()'s; of another clock, a
/// static_assert says how to convert it. Errors come as results too
/// (-ESHUTDOWN once the loop is stopped, -EOPNOTSUPP in fallback mode,
/// -EBUSY on a full queue, -EINVAL if @prep set user_data, or gave a
/// multishot request a deadline, or with a deadline took an SQE of its own
/// (started another request), -ENOMEM when the request's record cannot be
/// allocated, or @prep throws std::bad_alloc); anything else @prep throws
/// propagates, nothing submitted. Made on a moved-from Loop, awaited with
/// an empty @prep (a null function pointer) or while another coroutine
/// awaits it: throws tw::error EINVAL. A frame destroyed with the request in flight cancels it: the
/// kernel is done with its buffers and data on return (before Linux 6.0, if
/// submitted already: from the next iteration); the loop's record waits for its CQE. A request with more CQEs
/// (multishot, without a deadline) resumes with its first; the rest of it
/// is ignored, and cancelled when the io goes or is awaited again (each
/// co_await of an io is one request).
template <class Prep>
class [[nodiscard("tw: an awaitable does nothing unless awaited: co_await it")]] io {
public:
	io(tw::Loop &loop, Prep prep, tw::Loop::time_point deadline = tw::Loop::time_point::max())
		: prep_(std::move(prep)), c_(static_cast<tw::detail::loop_ctx *>(tw::detail::ops<tw::Loop>::share(loop))),
		  deadline_(deadline)
	{
	}
	template <class Clock, class Dur>
	io(tw::Loop &loop, Prep prep, std::chrono::time_point<Clock, Dur> deadline)
		: io(loop, std::move(prep), tw::detail::ns_tp<tw::Loop::time_point>(tw::detail::tp_ns(deadline)))
	{
		static_assert(std::is_same_v<Clock, tw::Loop::time_point::clock>,
			      "tw: io() takes a deadline of the loop clock (std::chrono::steady_clock): "
			      "convert one of another clock, loop.clock_now() + (tp - Clock::now())");
	}
	io(const io &) = delete;
	io &operator=(const io &) = delete;
	~io()
	{
		cancel();
		tw::detail::release(c_);
	}

	bool await_ready() const noexcept { return false; }
	// Each co_await is one request; the rest of an earlier one is cancelled.
	bool await_suspend(std::coroutine_handle<> h)
	{
		tw::detail::refuse_empty(prep_);
		if (waiting_) // another coroutine awaits it
			throw tw::error(EINVAL, "tw: the awaitable is awaited already");
		cancel();
		h_ = h;
		const std::uint64_t ns = tw::detail::tp_ns(deadline_);
		auto done = [this](const io_uring_cqe &cqe) {
			if (!(cqe.flags & IORING_CQE_F_MORE))
				op_ = nullptr; // ended; else (multishot, zero-copy) ~io cancels the rest
			if (!std::exchange(waiting_, false))
				return; // a later CQE: the frame has gone on (it may wait elsewhere)
			res_ = cqe.res;
			if (!c_->closing) // as sleep_until
				detail::resume(h_);
		};
		try {
			op_ = tw::detail::io_op::start(c_, prep_, done, has_deadline() ? &ns : nullptr, res_);
		} catch (const std::bad_alloc &) {
			res_ = -ENOMEM; // nothing submitted
		}
		return waiting_ = op_ != nullptr;
	}
	int await_resume() const noexcept { return res_; }

private:
	bool has_deadline() const noexcept { return deadline_ != tw::Loop::time_point::max(); }
	// A request in flight: its handler goes, and the kernel is done with its buffers on return:
	// an SQE not yet submitted becomes a no-op, else a sync cancel (the system call: liburing's
	// is not inline; before Linux 6.0 an async one, or with no SQE the deadline, if any, ends
	// it). Once the loop is gone, so is the record.
	void cancel() noexcept
	{
		if (op_ && c_->c) {
			op_->h.reset();
			io_uring *r = twheel_loop_ring(c_->loop());
			io_uring_sync_cancel_reg reg{}; // no time limit: a cancel ends the request at once
			reg.timeout = {-1, -1}, reg.addr = has_deadline() ? reinterpret_cast<std::uintptr_t>(op_->dl)
									  : reinterpret_cast<std::uintptr_t>(&op_->io);
			for (unsigned i = *r->sq.khead; i != r->sq.sqe_tail; i++)
				if (io_uring_sqe &s = r->sq.sqes[i & r->sq.ring_mask]; s.user_data == reg.addr) {
					const std::uint8_t link = s.flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK); // a linked timeout's
					return io_uring_prep_nop(&s), s.user_data = reg.addr, s.flags = link, void(op_ = nullptr);
				}
			if (syscall(__NR_io_uring_register, r->ring_fd, IORING_REGISTER_SYNC_CANCEL, &reg, 1) && errno != ENOENT && !c_->closing)
				if (auto *sqe = twheel_loop_get_sqe(c_->loop(), &detail::ignored_io))
					io_uring_prep_cancel64(sqe, reg.addr, 0);
		}
		op_ = nullptr;
	}

	Prep prep_; // first: a throwing move leaves no reference to release
	tw::detail::loop_ctx *c_;
	tw::Loop::time_point deadline_;
	tw::detail::io_op *op_ = nullptr;
	std::coroutine_handle<> h_;
	int res_ = 0;
	bool waiting_ = false; // suspended on op_'s first CQE
};

} // namespace tw::co

#endif // TWHEEL_CO_HPP
