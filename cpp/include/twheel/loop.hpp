// SPDX-License-Identifier: MIT
//
// twheel/loop.hpp - twheel++ over the io_uring event loop (<twheel/loop.h>).
// Header-only; link with twheel-uring. C++17 or later.
//
//   twheel::Loop        owns a struct twheel_loop; move-only.
//   twheel::LoopTimer   (also twheel::Loop::Timer) a move-only handle that
//                       embeds the C struct tw_loop_timer and the callback;
//                       cancels itself when destroyed.
//
// Threads: a Loop, its timers and its I/O belong to the loop thread (the
// thread that calls run(); before the first run and after it returned, the
// thread that owns the Loop). Only post(), stop() and stopped() may be
// called from any thread; post() is how other threads get work, including
// creating timers, onto the loop.
//
// Time: the loop clock, in nanoseconds, shown as
// std::chrono::steady_clock::time_point. With the default clock
// (CLOCK_MONOTONIC, which is what libstdc++ and libc++ use for steady_clock
// on Linux) these are ordinary steady_clock time points; with an injected
// clock (loop_options::clock) they are whatever that clock returns.
// Deadlines are rounded up to the loop's tick: nothing fires early.
//
// Storage, lending of callbacks while they run, exceptions and the
// cancellation callback work as for twheel::Timer (see <twheel/twheel.hpp>),
// except that a LoopTimer stores 48 bytes of callable inline (no allocation
// below that) and 16 bytes of cancellation callback beside it; exceptions go to
// the handler set with Loop::on_exception(), by default printed to stderr.
#ifndef TWHEEL_LOOP_HPP
#define TWHEEL_LOOP_HPP

#include <twheel/twheel.hpp>

#include <twheel/loop.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace twheel {

class Loop;
class LoopTimer;

/// How a periodic timer catches up after the loop fell a period or more
/// behind (the C TW_LOOP_MISFIRE_*).
enum class misfire {
	skip, ///< drop the overdue runs, resume on the next future deadline
	once, ///< run once now for all of them, then resume
	all,  ///< run every missed one, one per loop iteration, then resume
};

/// When a periodic timer's next deadline is counted from.
enum class schedule {
	fixed_rate,  ///< previous deadline + period
	fixed_delay, ///< end of the previous run + period
};

/// Loop configuration (see struct twheel_loop_config).
struct loop_options {
	/// Wheel tick, 1 us .. 1 s. Deadlines are rounded up to it.
	std::chrono::nanoseconds tick = std::chrono::milliseconds(1);
	/// Submission queue entries; 0 = 256.
	unsigned entries = 0;
	/// Inbox items (posts) handled per iteration; 0 = 4096.
	unsigned batch = 0;
	/// Raw TW_LOOP_* config flags (e.g. TW_LOOP_NO_DEFER_TASKRUN).
	unsigned flags = 0;
	/// The loop clock; empty = CLOCK_MONOTONIC. Called from any thread,
	/// concurrently; must be monotonic and must not throw (an exception
	/// escaping it calls std::terminate, as it would cross C frames).
	std::function<std::chrono::steady_clock::time_point()> clock;
};

namespace detail {

struct io_op_base;

// The heap-allocated state of a Loop (its address never changes).
struct loop_state {
	twheel_loop *loop = nullptr;
	exception_handler on_exception;
	std::function<std::chrono::steady_clock::time_point()> clock;
	io_op_base *io_head = nullptr; // in-flight I/O requests (loop thread)

	void report(std::exception_ptr e) noexcept { detail::report(&on_exception, e); }
};

// One I/O request in flight: the C handler node plus the user's handler.
struct io_op_base {
	tw_loop_io io;
	loop_state *st;
	io_op_base *prev = nullptr, *next = nullptr;
	bool cancelled = false; // preparation threw: complete silently
	void (*destroy)(io_op_base *) noexcept;

	void link() noexcept
	{
		next = st->io_head;
		if (next)
			next->prev = this;
		st->io_head = this;
	}
	void unlink() noexcept
	{
		if (prev)
			prev->next = next;
		else
			st->io_head = next;
		if (next)
			next->prev = prev;
		prev = next = nullptr;
	}
};

template <class H>
struct io_op final : io_op_base {
	H handler;

	template <class A>
	io_op(loop_state *s, A &&h) : io_op_base{{&complete}, s, nullptr, nullptr, false, &destroy_me},
				      handler(std::forward<A>(h))
	{
	}

	static void destroy_me(io_op_base *b) noexcept { delete static_cast<io_op *>(b); }

	static void complete(tw_loop_io *io, const io_uring_cqe *cqe) noexcept
	{
		auto *op = static_cast<io_op *>(reinterpret_cast<io_op_base *>(io));
		const bool last = !(cqe->flags & IORING_CQE_F_MORE);
		if (last)
			op->unlink(); // the handler may now outlive nothing but itself
		if (!op->cancelled) {
			try {
				(void)std::invoke(op->handler, *cqe);
			} catch (...) {
				op->st->report(std::current_exception());
			}
		}
		if (last)
			delete op;
	}
};

// A posted call: the C work node plus the callable.
struct work_base {
	tw_loop_work w; // first: pointer-interconvertible with the base
	loop_state *st;
};

template <class F>
struct work_item final : work_base {
	F f;

	template <class A>
	work_item(loop_state *s, A &&a) : work_base{{}, s}, f(std::forward<A>(a))
	{
		tw_loop_work_init(&w, &run);
	}

	static void run(tw_loop_work *w) noexcept
	{
		auto *item = static_cast<work_item *>(reinterpret_cast<work_base *>(w));
		try {
			(void)std::invoke(item->f);
		} catch (...) {
			item->st->report(std::current_exception());
		}
		delete item;
	}
};

static_assert(std::is_standard_layout_v<io_op_base> && std::is_standard_layout_v<work_base>);

inline std::uint64_t ns_since_epoch_ceil(std::chrono::steady_clock::time_point tp) noexcept
{
	return ticks_ceil(tp.time_since_epoch(), std::chrono::nanoseconds(1));
}

inline std::chrono::steady_clock::time_point from_ns(std::uint64_t ns) noexcept
{
	using namespace std::chrono;
	if (ns > static_cast<std::uint64_t>(nanoseconds::max().count()))
		return steady_clock::time_point::max();
	return steady_clock::time_point(duration_cast<steady_clock::duration>(
		nanoseconds(static_cast<std::int64_t>(ns))));
}

} // namespace detail

/// A timer on a Loop: a move-only handle embedding the C struct
/// tw_loop_timer (96 bytes), the callback (inline_capacity = 48 bytes
/// inline) and an optional cancellation callback. Built by Loop::after(),
/// at(), every() or timer(). All members: the loop thread only.
///
/// The callback is invocable as f() or f(LoopTimer &) and runs on the loop
/// thread. It may arm, cancel, move or destroy this or any other timer; its
/// captures stay alive until it returns (the callable is lent out of the
/// handle while it runs).
class LoopTimer {
public:
	/// Callable bytes stored inline: a callable of at most 48 bytes,
	/// alignment at most alignof(void *) and a noexcept move constructor
	/// is not heap-allocated.
	static constexpr std::size_t inline_capacity = 48;
	/// Cancellation callable bytes stored inline.
	static constexpr std::size_t cancel_inline_capacity = 16;

	/// An empty handle: not pending, cancel() a no-op, arming throws.
	LoopTimer() noexcept : node_{}, st_(nullptr) { clear_node(); }

	/// Moves @o here. If @o was armed, this handle is armed at the same
	/// deadline (the wheel node is re-linked in place, O(1)) and fires once.
	/// Moving a periodic timer from inside its own callback re-arms the new
	/// handle at the next deadline of its schedule (fixed rate: exactly as
	/// the loop would; fixed delay: counted from the move rather than from
	/// the end of the run). @o is left empty. noexcept.
	LoopTimer(LoopTimer &&o) noexcept : node_{}, st_(o.st_)
	{
		take_node(o);
		fn_.take(o.fn_);
		cancel_.take(o.cancel_);
		o.st_ = nullptr;
	}

	/// Cancels this timer (running its cancellation callback if it was
	/// armed), destroys its callbacks, then moves @o here as the move
	/// constructor does. Self-assignment does nothing. noexcept.
	LoopTimer &operator=(LoopTimer &&o) noexcept
	{
		if (this == &o)
			return *this;
		cancel();
		fn_.reset();
		cancel_.reset();
		st_ = o.st_;
		take_node(o);
		fn_.take(o.fn_);
		cancel_.take(o.cancel_);
		o.st_ = nullptr;
		return *this;
	}

	LoopTimer(const LoopTimer &) = delete;
	LoopTimer &operator=(const LoopTimer &) = delete;

	/// Cancels the timer (as cancel()), then destroys its callbacks. Safe
	/// inside any callback, including its own (a periodic timer destroyed
	/// there does not run again). O(1); the loop thread. noexcept.
	~LoopTimer() { cancel(); }

	/// Arms (or re-arms) the timer @d after a fresh reading of the loop
	/// clock, @d rounded up to whole nanoseconds and the deadline up to the
	/// tick: never early. Zero or negative: the next iteration. A periodic
	/// timer keeps its period after this run. Returns true if it was armed.
	/// O(1), no system call; the loop thread (callbacks included). Throws
	/// std::logic_error on an empty handle, std::system_error with the C
	/// error otherwise (EINVAL: period shorter than the tick; ENOSPC).
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		return check(twheel_loop_mod(loop(), &node_, ticks_ceil(d, std::chrono::nanoseconds(1))));
	}

	/// Arms (or re-arms) the timer for the loop-clock time @tp (rounded up
	/// to the tick). A time in the past fires in the next iteration.
	/// Returns true if it was armed. Cost, thread, exceptions: as arm_in().
	bool arm_at(std::chrono::steady_clock::time_point tp)
	{
		return check(twheel_loop_mod_at(loop(), &node_, detail::ns_since_epoch_ceil(tp)));
	}

	/// Disarms the timer. Returns true if it was armed, or is a periodic
	/// timer whose callback is running now (it will not run again); then
	/// the cancellation callback runs before cancel() returns. Never runs
	/// the expiry callback. O(1); the loop thread. noexcept: exceptions from
	/// the cancellation callback go to the loop's exception handler.
	bool cancel() noexcept
	{
		// Ownership is checked first: a timer the loop does not own may
		// outlive the loop (and its state).
		if (!st_ || !tw_loop_timer_busy(&node_) || twheel_loop_del(st_->loop, &node_) != 1)
			return false;
		if (!cancel_.empty())
			cancel_.call_lent_erased(&st_->on_exception);
		return true;
	}

	/// True if the timer is armed on the loop's wheel (false inside its own
	/// callback, even for a periodic timer, which the loop re-arms when the
	/// callback returns). O(1); the loop thread; noexcept.
	bool pending() const noexcept { return tw_timer_pending(&node_.timer); }

	/// The deadline the timer is armed for; inside its callback, the
	/// deadline being served. nullopt otherwise. noexcept.
	std::optional<std::chrono::steady_clock::time_point> deadline() const noexcept
	{
		if (!st_ || !(pending() || fn_.lent()))
			return std::nullopt;
		return detail::from_ns(node_.deadline);
	}

	/// The period (zero for a one-shot timer). noexcept.
	std::chrono::nanoseconds period() const noexcept
	{
		return std::chrono::nanoseconds(static_cast<std::int64_t>(node_.period));
	}

	/// Inside a periodic callback: how many further deadlines had also
	/// passed when it ran (0 when the loop kept up). noexcept.
	std::uint32_t missed() const noexcept { return node_.missed; }

	/// Sets the cancellation callback (invocable as g(); nullptr removes
	/// it). Runs once each time the timer stops being armed without firing:
	/// cancel() returning true, destruction or assignment over an armed
	/// timer, destruction of the loop. Never on expiry or re-arm. It must
	/// not destroy or move its own timer while that timer's destructor or
	/// assignment runs it. Allocates only above cancel_inline_capacity.
	template <class G>
	void on_cancel(G &&g)
	{
		using D = std::decay_t<G>;
		cancel_.reset();
		if constexpr (!std::is_same_v<D, std::nullptr_t>) {
			static_assert(std::is_invocable_v<D &>, "a cancellation callback is invocable as g()");
			using R = std::remove_cv_t<std::remove_reference_t<G>>;
			if constexpr (std::is_pointer_v<R> || std::is_member_pointer_v<R>) {
				if (g == nullptr)
					return;
			}
			cancel_.template emplace<D>(std::forward<G>(g));
		}
	}

	/// True if the handle has a loop and a callback. noexcept.
	explicit operator bool() const noexcept { return st_ != nullptr; }

	/// The embedded C timer (read-only). noexcept.
	const tw_loop_timer *native_handle() const noexcept { return &node_; }

private:
	friend class Loop;

	template <class F>
	LoopTimer(detail::loop_state *st, F &&f, std::uint64_t period_ns, unsigned flags)
		: node_{}, st_(st)
	{
		using D = std::decay_t<F>;
		using R = std::remove_cv_t<std::remove_reference_t<F>>;
		if constexpr (std::is_pointer_v<R> || std::is_member_pointer_v<R>) {
			if (f == nullptr)
				throw std::invalid_argument("twheel::LoopTimer: null function pointer");
		}
		const int r = period_ns ? tw_loop_timer_init_periodic(&node_, &fire<D>, period_ns, flags)
					: tw_loop_timer_init(&node_, &fire<D>, flags);
		if (r < 0)
			throw std::system_error(-r, std::generic_category(), "tw_loop_timer_init");
		fn_.template emplace<D>(std::forward<F>(f));
	}

	static LoopTimer *from_node(tw_loop_timer *n) noexcept { return reinterpret_cast<LoopTimer *>(n); }

	template <class D>
	static void fire(tw_loop_timer *n) noexcept
	{
		LoopTimer *self = from_node(n);
		detail::loop_state *st = self->st_;
		self->fn_.template call_lent<D>([self, st](D &f) noexcept {
			(void)self;
			try {
				if constexpr (std::is_invocable_v<D &, LoopTimer &>)
					(void)std::invoke(f, *self);
				else
					(void)std::invoke(f);
			} catch (...) {
				st->report(std::current_exception());
			}
		});
	}

	twheel_loop *loop() const
	{
		if (!st_)
			throw std::logic_error("twheel::LoopTimer used while empty");
		return st_->loop;
	}

	static bool check(int r)
	{
		if (r < 0)
			throw std::system_error(-r, std::generic_category(), "twheel::LoopTimer arm");
		return r == 1;
	}

	void clear_node() noexcept
	{
		std::memset(&node_, 0, sizeof node_);
		tw_timer_init(&node_.timer, nullptr);
	}

	// Takes over @o's C node; see the move constructor.
	void take_node(LoopTimer &o) noexcept
	{
		bool rearm = false;
		std::uint64_t next = 0;
		if (o.st_ && o.node_.period && o.fn_.lent() && !tw_timer_pending(&o.node_.timer)) {
			// Possibly the periodic timer whose callback runs now: the loop
			// would re-arm the old address after the callback, so take it
			// off the loop and re-arm the new handle ourselves.
			const tw_loop_timer &t = o.node_;
			const std::uint64_t p = t.period;
			if (t.timer.flags & TW_LOOP_FIXED_DELAY) {
				next = detail::add_sat(twheel_loop_clock(o.st_->loop), p);
			} else {
				const unsigned policy = t.timer.flags & TW_LOOP_MISFIRE_MASK;
				const std::uint64_t k = (t.missed && policy != TW_LOOP_MISFIRE_ALL) ? t.missed + 1u : 1u;
				std::uint64_t step;
				next = __builtin_mul_overflow(k, p, &step) ? tick_max : detail::add_sat(t.deadline, step);
			}
			rearm = twheel_loop_del(o.st_->loop, &o.node_) == 1;
		}
		node_ = o.node_;
		if (tw_timer_pending(&node_.timer)) {
			node_.timer.entry.prev->next = &node_.timer.entry;
			node_.timer.entry.next->prev = &node_.timer.entry;
		}
		o.clear_node();
		if (rearm)
			(void)twheel_loop_add_at(st_->loop, &node_, next);
	}

	// Called by ~Loop on each timer the loop hands back.
	static void drained(tw_loop_timer *n, void *arg) noexcept
	{
		LoopTimer *t = from_node(n);
		t->st_ = nullptr; // the loop is going away: no re-arming
		t->cancel_.call_lent_erased(&static_cast<detail::loop_state *>(arg)->on_exception);
	}

	tw_loop_timer node_; // first member: pointer-interconvertible with *this
	detail::loop_state *st_;
	detail::slot<inline_capacity> fn_;
	detail::slot<cancel_inline_capacity> cancel_;
};

static_assert(std::is_standard_layout_v<LoopTimer>, "LoopTimer must be standard-layout");

/// An io_uring event loop driving a timer wheel: owns a struct twheel_loop.
/// Move-only; timers and in-flight I/O keep working across a move.
class Loop {
public:
	using time_point = std::chrono::steady_clock::time_point;
	using Timer = LoopTimer;

	/// Creates the loop (one io_uring, two wheels, an eventfd). Throws
	/// std::system_error with the C error (EPERM or ENOSYS: io_uring refused
	/// or absent; EINVAL: bad tick; ENOMEM...) and the C library's one-line
	/// explanation in what(); std::bad_alloc. Any thread.
	explicit Loop(const loop_options &opt = loop_options()) : st_(new detail::loop_state)
	{
		twheel_loop_config cfg;
		twheel_loop_config_init(&cfg);
		// a non-positive tick becomes 1 ns, which the C library rejects (EINVAL)
		cfg.tick_ns = opt.tick.count() > 0 ? static_cast<std::uint64_t>(opt.tick.count()) : 1u;
		cfg.entries = opt.entries;
		cfg.batch = opt.batch;
		cfg.flags = opt.flags;
		if (opt.clock) {
			st_->clock = opt.clock;
			cfg.clock = &clock_trampoline;
			cfg.clock_arg = st_;
		}
		char msg[256] = "";
		const int r = twheel_loop_create(&st_->loop, &cfg, msg, sizeof msg);
		if (r < 0) {
			delete st_;
			throw std::system_error(-r, std::generic_category(),
						std::string("twheel::Loop: ") + msg);
		}
	}

	/// Moves the loop; @o is left empty (only destruction and assignment
	/// are valid on it). Not while it runs. noexcept.
	Loop(Loop &&o) noexcept : st_(std::exchange(o.st_, nullptr)) {}
	Loop &operator=(Loop &&o) noexcept
	{
		if (this != &o) {
			close();
			st_ = std::exchange(o.st_, nullptr);
		}
		return *this;
	}
	Loop(const Loop &) = delete;
	Loop &operator=(const Loop &) = delete;

	/// Destroys the loop: runs posts not yet run (a post promises a call),
	/// cancels every armed timer (running its cancellation callback; the
	/// handle becomes empty), closes the ring (in-flight I/O is cancelled,
	/// its handlers are not called but are destroyed). Must not run while
	/// run() runs on another thread, nor from a callback. The loop thread.
	~Loop() { close(); }

	/// A one-shot timer running @f @d from now: @d (any duration) rounded
	/// up to whole nanoseconds, the deadline up to the tick; never early.
	/// O(1), no system call; allocates only if @f exceeds
	/// LoopTimer::inline_capacity. The loop thread. Throws std::invalid_argument
	/// (null function pointer), std::system_error (the C error), what
	/// constructing @f throws, std::logic_error on a moved-from Loop.
	template <class Rep, class Period, class F>
	LoopTimer after(std::chrono::duration<Rep, Period> d, F &&f)
	{
		LoopTimer t(state(), std::forward<F>(f), 0, 0);
		t.arm_in(d);
		return t;
	}

	/// A one-shot timer running @f at loop-clock time @tp (rounded up to
	/// the tick; a time past fires in the next iteration). As after().
	template <class F>
	LoopTimer at(time_point tp, F &&f)
	{
		LoopTimer t(state(), std::forward<F>(f), 0, 0);
		t.arm_at(tp);
		return t;
	}

	/// A periodic timer running @f every @period (rounded up to whole
	/// nanoseconds), first @period from now, with misfire policy @m and
	/// schedule @s. @period must be at least the loop's tick
	/// (std::system_error EINVAL otherwise). As after().
	template <class Rep, class Period, class F>
	LoopTimer every(std::chrono::duration<Rep, Period> period, F &&f, misfire m = misfire::skip,
			schedule s = schedule::fixed_rate)
	{
		const std::uint64_t p = ticks_ceil(period, std::chrono::nanoseconds(1));
		if (p == 0)
			throw std::system_error(EINVAL, std::generic_category(), "twheel::Loop::every: zero period");
		unsigned flags = (s == schedule::fixed_delay ? TW_LOOP_FIXED_DELAY : TW_LOOP_FIXED_RATE);
		flags |= m == misfire::once ? TW_LOOP_MISFIRE_ONCE
		       : m == misfire::all  ? TW_LOOP_MISFIRE_ALL
					    : TW_LOOP_MISFIRE_SKIP;
		LoopTimer t(state(), std::forward<F>(f), p, flags);
		LoopTimer::check(twheel_loop_add(st_->loop, &t.node_, p));
		return t;
	}

	/// A one-shot timer running @f, not armed (arm it with arm_in() or
	/// arm_at(); re-arming an existing timer is the cheap way to keep an
	/// idle timeout moving). As after(), without arming.
	template <class F>
	LoopTimer timer(F &&f)
	{
		return LoopTimer(state(), std::forward<F>(f), 0, 0);
	}

	/// Runs @f() on the loop thread at its next iteration (in order with
	/// other posts from the same thread). Any thread; lock-free apart from
	/// one allocation (the callable plus 32 bytes). Returns false, and
	/// destroys @f without calling it, if the loop was stopped. Posts not yet
	/// run when the loop is destroyed run then. Exceptions from @f go to the
	/// loop's exception handler. Throws std::bad_alloc, what copying @f
	/// throws, std::logic_error on a moved-from Loop.
	template <class F>
	bool post(F &&f)
	{
		using D = std::decay_t<F>;
		static_assert(std::is_invocable_v<D &>, "post() takes a callable invocable as f()");
		auto *item = new detail::work_item<D>(state(), std::forward<F>(f));
		const int r = twheel_loop_post(st_->loop, &item->w);
		if (r < 0) {
			delete item;
			if (r == -ESHUTDOWN)
				return false;
			throw std::system_error(-r, std::generic_category(), "twheel_loop_post");
		}
		return true;
	}

	/// Submits one I/O request: @prep(io_uring_sqe &) prepares it with any
	/// io_uring_prep_*() (do not set user_data); @handler(const
	/// io_uring_cqe &) runs on the loop thread for each completion (several
	/// for a multishot request; the last has no IORING_CQE_F_MORE, then the
	/// handler is destroyed). The SQE goes to the kernel at the next wait.
	/// Returns the request's user_data key (for io_uring_prep_cancel64()).
	/// Allocates the handler once. The loop thread. Throws std::system_error
	/// EBUSY if the submission queue is full, and whatever @prep throws (the
	/// SQE then becomes a no-op and @handler is never called).
	template <class Prep, class H>
	std::uint64_t submit(Prep &&prep, H &&handler)
	{
		using D = std::decay_t<H>;
		static_assert(std::is_invocable_v<D &, const io_uring_cqe &>,
			      "an I/O handler is invocable as h(const io_uring_cqe &)");
		auto *op = new detail::io_op<D>(state(), std::forward<H>(handler));
		io_uring_sqe *sqe = twheel_loop_get_sqe(st_->loop, &op->io);
		if (!sqe) {
			delete op;
			throw std::system_error(EBUSY, std::generic_category(), "twheel::Loop::submit: queue full");
		}
		op->link();
		try {
			std::forward<Prep>(prep)(*sqe);
		} catch (...) {
			io_uring_prep_nop(sqe);
			op->cancelled = true;
			io_uring_sqe_set_data(sqe, &op->io);
			throw;
		}
		io_uring_sqe_set_data(sqe, &op->io);
		return reinterpret_cast<std::uintptr_t>(&op->io);
	}

	/// Runs the loop until stop(). Each iteration sleeps until the next
	/// timer, an I/O completion or a post. Returns when stopped. The calling
	/// thread becomes the loop thread. Throws std::system_error on an
	/// io_uring error (EBUSY: called from a callback). Exceptions from
	/// callbacks go to the exception handler.
	void run()
	{
		const int r = twheel_loop_run(handle());
		if (r < 0)
			throw std::system_error(-r, std::generic_category(), "twheel::Loop::run");
	}

	/// Runs one iteration; with @wait false, does not sleep (polls). Returns
	/// the number of callbacks run (0 once stopped). As run() otherwise.
	std::size_t run_once(bool wait = true)
	{
		const int r = twheel_loop_run_once(handle(), wait ? 0u : static_cast<unsigned>(TW_LOOP_NOWAIT));
		if (r == -ESHUTDOWN)
			return 0;
		if (r < 0)
			throw std::system_error(-r, std::generic_category(), "twheel::Loop::run_once");
		return static_cast<std::size_t>(r);
	}

	/// Asks the loop to stop after the current iteration; final (posts then
	/// fail, run_once() returns 0). Any thread, callbacks included;
	/// lock-free; noexcept.
	void stop() noexcept
	{
		if (st_)
			twheel_loop_stop(st_->loop);
	}

	/// True once stop() was called. Any thread; noexcept.
	bool stopped() const noexcept { return !st_ || twheel_loop_stopped(st_->loop); }

	/// The loop clock read at the start of the current (or last) iteration;
	/// not updated while callbacks run. O(1); the loop thread; noexcept.
	time_point now() const noexcept { return st_ ? detail::from_ns(twheel_loop_now(st_->loop)) : time_point(); }

	/// A fresh reading of the loop clock. O(1); any thread; noexcept.
	time_point clock_now() const noexcept
	{
		return st_ ? detail::from_ns(twheel_loop_clock(st_->loop)) : time_point();
	}

	/// The tick length. O(1); any thread; noexcept.
	std::chrono::nanoseconds tick() const noexcept
	{
		return std::chrono::nanoseconds(st_ ? static_cast<std::int64_t>(twheel_loop_tick(st_->loop)) : 0);
	}

	/// Number of timers armed on the loop. O(1); the loop thread; noexcept.
	std::size_t size() const noexcept { return st_ ? twheel_loop_count(st_->loop) : 0; }

	/// Sets the handler for exceptions escaping timer callbacks, posted
	/// functions, I/O handlers and cancellation callbacks (it runs on the
	/// loop thread); empty restores the default (print what() to stderr,
	/// carry on). The loop thread, while no callback runs.
	void on_exception(exception_handler h) { state()->on_exception = std::move(h); }

	/// The C loop, for calls this class does not wrap. nullptr if moved-from.
	twheel_loop *native_handle() const noexcept { return st_ ? st_->loop : nullptr; }

private:
	detail::loop_state *state() const
	{
		if (!st_)
			throw std::logic_error("twheel::Loop used after being moved from");
		return st_;
	}
	twheel_loop *handle() const { return state()->loop; }

	static std::uint64_t clock_trampoline(void *arg) noexcept
	{
		auto *st = static_cast<detail::loop_state *>(arg);
		const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(st->clock().time_since_epoch());
		return ns.count() > 0 ? static_cast<std::uint64_t>(ns.count()) : 0;
	}

	void close() noexcept
	{
		if (!st_)
			return;
		twheel_loop_destroy(st_->loop, &LoopTimer::drained, nullptr, st_);
		while (detail::io_op_base *op = st_->io_head) {
			op->unlink();
			op->destroy(op);
		}
		delete st_;
		st_ = nullptr;
	}

	detail::loop_state *st_;
};

} // namespace twheel

#endif // TWHEEL_LOOP_HPP
