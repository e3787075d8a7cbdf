// SPDX-License-Identifier: MIT
//
// twheel/twheel.hpp - twheel++: thin, header-only RAII handles over the
// libtwheel C wheel (<twheel/twheel.h>). C++17 or later.
//
//   twheel::Wheel   owns a struct twheel; move-only.
//   twheel::Timer   a move-only handle that embeds the struct tw_timer and the
//                   callback; cancels itself when destroyed.
//
// Design
// ======
// A Timer is the C timer plus the callable, in one object (128 bytes on LP64
// in a release build):
//
//     offset  size  field
//          0    40  struct tw_timer node_  (func = a trampoline typed on the
//                                            callable, so firing costs one
//                                            indirect call, as in C)
//         40     8  context *ctx_          (the wheel and its exception handler)
//         48    56  slot<48> fn_           (ops pointer + 48 bytes of storage)
//        104    24  slot<16> cancel_       (the optional cancellation callback)
//
// Callables of at most Timer::inline_capacity (48) bytes, alignment at most
// alignof(void *) and a noexcept move constructor are stored inline: no heap
// allocation. Larger ones are allocated once, when the Timer is built. The
// cancellation callback has Timer::cancel_inline_capacity (16) bytes inline.
//
// Moving a pending Timer re-links its intrusive node in place (the wheel holds
// no other reference to a timer than the list links), so the moved-to handle
// stays pending at the same expiry, in the same position, and fires once.
// This is O(1) and works from inside any callback, even while the wheel is
// firing the list the timer is on.
//
// Callbacks are lent: before a callback runs, the trampoline moves the
// callable out of the Timer onto its own stack frame (Boost.Asio does the
// same with handlers). The callback may therefore destroy, move or re-arm its
// own Timer and go on using its captures; when it returns the callable goes
// back into whichever Timer now owns it, or is destroyed if none does.
//
// Exceptions never unwind through C frames: every exception that escapes a
// callback (or a cancellation callback) is caught in C++ and handed to the
// wheel's exception handler (Wheel::on_exception()); the default prints
// what() to stderr and carries on with the next timer.
//
// Threads: as for the C API, a wheel and its timers belong to one thread at a
// time; nothing here locks. "The wheel's thread" below means that thread.
//
// Lifetime: a Timer must not be armed after its Wheel is destroyed. Destroying
// a Wheel cancels every pending Timer (running its cancellation callback) and
// leaves it empty; Timers that were not pending may still be destroyed or
// moved after the Wheel, nothing else.
#ifndef TWHEEL_TWHEEL_HPP
#define TWHEEL_TWHEEL_HPP

// The C API names its wheel `struct twheel`, which would collide with
// namespace twheel: in C++, <twheel/twheel.h> itself names it `twheel_c`
// (the functions are extern "C", so the tag does not affect linkage), and
// the C and C++ headers may be included in any order.
#include <twheel/twheel.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

namespace twheel {

/// Absolute time on a wheel, in ticks (the C tw_tick_t).
using tick_t = tw_tick_t;

/// The C wheel type (the C API's struct twheel, seen from C++).
using c_wheel = ::twheel_c;

/// The largest tick; saturating conversions stop here.
inline constexpr tick_t tick_max = TW_TICK_MAX;

/// Receives every exception that escapes a callback. Runs on the thread that
/// ran the callback, inside the advance (or cancel) that ran it. Anything it
/// throws is printed to stderr and dropped.
using exception_handler = std::function<void(std::exception_ptr)>;

class Wheel;
class Timer;

/// Converts a duration @d to a whole number of ticks of length @tick,
/// rounding up, so that a timer armed d from now never fires early.
/// Zero, negative and NaN durations give 0; durations beyond the range of
/// tick_t saturate at tick_max. @tick must be positive. O(1), any thread,
/// noexcept. Works for every std::chrono::duration (integer or floating Rep,
/// any period, including periods finer than a nanosecond).
template <class Rep, class Period>
tick_t ticks_ceil(std::chrono::duration<Rep, Period> d, std::chrono::nanoseconds tick) noexcept
{
	using namespace std::chrono;
	if (!(d > d.zero()))
		return 0;
	const auto t = static_cast<std::uint64_t>(tick.count());
	// Values near or beyond nanoseconds::max() would overflow the integer
	// conversion: compute those in long double and saturate.
	using ldns = duration<long double, std::nano>;
	const long double ns = duration_cast<ldns>(d).count();
	if (ns >= static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 2)) {
		const long double n = ns / static_cast<long double>(t);
		if (n >= static_cast<long double>(tick_max))
			return tick_max;
		const auto whole = static_cast<tick_t>(n);
		return static_cast<long double>(whole) < n ? whole + 1 : whole;
	}
	const auto n = static_cast<std::uint64_t>(ceil<nanoseconds>(d).count());
	return n / t + (n % t != 0 ? 1 : 0);
}

namespace detail {

inline void default_exception_handler(std::exception_ptr e) noexcept
{
	try {
		if (e)
			std::rethrow_exception(e);
	} catch (const std::exception &x) {
		std::fprintf(stderr, "twheel: a timer callback threw: %s\n", x.what());
	} catch (...) {
		std::fprintf(stderr, "twheel: a timer callback threw a non-std exception\n");
	}
}

// Hands @e to @h (nullptr or empty: the default handler). Never throws.
inline void report(const exception_handler *h, std::exception_ptr e) noexcept
{
	if (!h || !*h) {
		default_exception_handler(e);
		return;
	}
	try {
		(*h)(e);
	} catch (...) {
		std::fprintf(stderr, "twheel: the exception handler threw; ignored\n");
	}
}

// What a Timer needs of its wheel: the C wheel, how long a tick is, and
// where exceptions go. Owned by a Wheel (or a Loop), at a stable address.
struct context {
	c_wheel *w = nullptr;
	std::chrono::nanoseconds tick{std::chrono::milliseconds(1)};
	exception_handler on_exception;
	// Reads the current time for arm_in(); the loop installs one that
	// refreshes its clock first. nullptr: use twheel_now(w).
	tick_t (*now_fn)(context *) = nullptr;

	tick_t now() noexcept { return now_fn ? now_fn(this) : twheel_now(w); }

	void report(std::exception_ptr e) noexcept { detail::report(&on_exception, e); }
};

inline tick_t add_sat(tick_t a, tick_t b) noexcept
{
	return b > tick_max - a ? tick_max : a + b;
}

// Type-erased operations on a stored callable. Tables are 8-aligned, so a
// slot can tag the low bit of its ops pointer to mean "lent".
struct slot_ops {
	void (*relocate)(void *dst, void *src) noexcept; // move to dst, destroy src
	void (*destroy)(void *p) noexcept;
	void (*invoke)(void *p); // call with no arguments (cancellation slots)
};

// Where a lent callable's slot is now (nullptr once the slot is gone).
struct lend_guard {
	void *slot;
};

template <class F>
inline constexpr bool nothrow_relocatable = std::is_nothrow_move_constructible_v<F>;

template <class F>
void invoke0(void *p)
{
	if constexpr (std::is_invocable_v<F &>)
		(*static_cast<F *>(p))();
	else
		(void)p;
}

template <class F>
struct inline_ops {
	static F *get(void *p) noexcept { return std::launder(static_cast<F *>(p)); }
	static void relocate(void *dst, void *src) noexcept
	{
		F *s = get(src);
		::new (dst) F(std::move(*s));
		s->~F();
	}
	static void destroy(void *p) noexcept { get(p)->~F(); }
	static void invoke(void *p) { invoke0<F>(get(p)); }
	static constexpr slot_ops table{&relocate, &destroy, &invoke};
};

template <class F>
struct heap_ops {
	static F *get(void *p) noexcept
	{
		F *f;
		std::memcpy(&f, p, sizeof f);
		return f;
	}
	static void relocate(void *dst, void *src) noexcept { std::memcpy(dst, src, sizeof(F *)); }
	static void destroy(void *p) noexcept { delete get(p); }
	static void invoke(void *p) { invoke0<F>(get(p)); }
	static constexpr slot_ops table{&relocate, &destroy, &invoke};
};

// Storage for one callable: N bytes inline, else one heap block.
template <std::size_t N>
class slot {
	static_assert(N >= sizeof(void *), "a slot must hold at least a pointer");

public:
	template <class F>
	static constexpr bool stores_inline = sizeof(F) <= N && alignof(F) <= alignof(void *) &&
					      nothrow_relocatable<F>;

	slot() noexcept = default;
	slot(const slot &) = delete;
	slot &operator=(const slot &) = delete;
	slot(slot &&o) noexcept { take(o); }
	slot &operator=(slot &&) = delete;
	~slot() { reset(); }

	bool empty() const noexcept { return ops_ == 0; }

	// Store @f; the slot must be empty. Throws what F's constructor or
	// operator new throws; the slot stays empty then.
	template <class F, class A>
	void emplace(A &&f)
	{
		if constexpr (stores_inline<F>) {
			::new (static_cast<void *>(buf_)) F(std::forward<A>(f));
			set_ops(&inline_ops<F>::table);
		} else {
			F *p = new F(std::forward<A>(f));
			std::memcpy(buf_, &p, sizeof p);
			set_ops(&heap_ops<F>::table);
		}
	}

	// Move the contents of @o (possibly lent) here; this slot must be empty.
	void take(slot &o) noexcept
	{
		ops_ = o.ops_;
		if (!ops_)
			return;
		if (lent()) {
			lend_guard *g = o.guard();
			std::memcpy(buf_, &g, sizeof g);
			g->slot = this;
		} else {
			ops()->relocate(buf_, o.buf_);
		}
		o.ops_ = 0;
	}

	// Destroy the callable (or, if it is lent, let its borrower destroy it).
	void reset() noexcept
	{
		if (!ops_)
			return;
		if (lent())
			guard()->slot = nullptr;
		else
			ops()->destroy(buf_);
		ops_ = 0;
	}

	// Lend the callable, known to be of type F, to @call(F &) and take it
	// back afterwards into whatever slot then owns it. @call must not throw.
	template <class F, class Call>
	void call_lent(Call &&call) noexcept
	{
		lend_guard g{this};
		const std::uintptr_t ops = ops_;
		if constexpr (stores_inline<F>) {
			F *src = std::launder(reinterpret_cast<F *>(buf_));
			alignas(F) unsigned char tmp[sizeof(F)];
			F *f = ::new (static_cast<void *>(tmp)) F(std::move(*src));
			src->~F();
			lend(&g);
			call(*f);
			if (g.slot) {
				auto *s = static_cast<slot *>(g.slot);
				::new (static_cast<void *>(s->buf_)) F(std::move(*f));
				s->ops_ = ops;
			}
			f->~F();
		} else {
			F *f = heap_ops<F>::get(buf_);
			lend(&g);
			call(*f);
			if (g.slot) {
				auto *s = static_cast<slot *>(g.slot);
				std::memcpy(s->buf_, &f, sizeof f);
				s->ops_ = ops;
			} else {
				delete f;
			}
		}
	}

	// As call_lent() for a callable of unknown type, called with no
	// arguments; exceptions go to @h (nullptr: the default handler).
	void call_lent_erased(const exception_handler *h) noexcept
	{
		if (!ops_ || lent())
			return; // empty, or already running (re-entrant cancel)
		lend_guard g{this};
		const std::uintptr_t ops = ops_;
		const slot_ops *o = this->ops();
		alignas(void *) unsigned char tmp[N];
		o->relocate(tmp, buf_);
		lend(&g);
		try {
			o->invoke(tmp);
		} catch (...) {
			report(h, std::current_exception());
		}
		if (g.slot) {
			auto *s = static_cast<slot *>(g.slot);
			o->relocate(s->buf_, tmp);
			s->ops_ = ops;
		} else {
			o->destroy(tmp);
		}
	}

	// True while the callable is lent out (its call is running).
	bool lent() const noexcept { return (ops_ & 1u) != 0; }

private:
	const slot_ops *ops() const noexcept
	{
		return reinterpret_cast<const slot_ops *>(ops_ & ~std::uintptr_t{1});
	}
	void set_ops(const slot_ops *o) noexcept { ops_ = reinterpret_cast<std::uintptr_t>(o); }
	lend_guard *guard() const noexcept
	{
		lend_guard *g;
		std::memcpy(&g, buf_, sizeof g);
		return g;
	}
	void lend(lend_guard *g) noexcept
	{
		ops_ |= 1u;
		std::memcpy(buf_, &g, sizeof g);
	}

	std::uintptr_t ops_ = 0; // const slot_ops *, low bit set while lent
	alignas(void *) unsigned char buf_[N];
};

} // namespace detail

/// A timer wheel: owns one C struct twheel and the exception handler of the
/// timers on it. Move-only. Time is virtual: the wheel's clock moves only
/// when advance() is called; a tick lasts tick_length() (for converting
/// std::chrono durations in Timer::arm_in()).
class Wheel {
public:
	/// Creates a wheel whose time starts at @start ticks; one tick lasts
	/// @tick (default 1 ms). Allocates once (about 11.5 KiB for the C wheel
	/// plus the context). Throws std::bad_alloc, or std::invalid_argument if
	/// @tick is not positive. Any thread.
	explicit Wheel(tick_t start = 0,
		       std::chrono::nanoseconds tick = std::chrono::milliseconds(1))
		: ctx_(new detail::context)
	{
		if (tick.count() <= 0) {
			delete ctx_;
			throw std::invalid_argument("twheel::Wheel: tick length must be positive");
		}
		ctx_->tick = tick;
		ctx_->w = twheel_create(start);
		if (!ctx_->w) {
			delete ctx_;
			throw std::bad_alloc();
		}
	}

	/// Moves the wheel; Timers on it stay valid and pending (they refer to
	/// the wheel's context, which does not move). @o is left empty: only
	/// destruction, assignment and the const queries (which return 0 or
	/// nullopt) are valid on it. O(1), noexcept.
	Wheel(Wheel &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}

	/// Destroys this wheel (as the destructor does), then takes @o's.
	Wheel &operator=(Wheel &&o) noexcept
	{
		if (this != &o) {
			close();
			ctx_ = std::exchange(o.ctx_, nullptr);
		}
		return *this;
	}

	Wheel(const Wheel &) = delete;
	Wheel &operator=(const Wheel &) = delete;

	/// Cancels every pending Timer (each one's cancellation callback runs
	/// once; the Timer becomes empty and must not be armed again), then frees
	/// the wheel. No expiry callback runs. O(pending timers). The wheel's
	/// thread; must not run inside one of the wheel's callbacks. noexcept:
	/// exceptions from cancellation callbacks go to the exception handler.
	~Wheel() { close(); }

	/// Advances the wheel's time to @now, running in nondecreasing order of
	/// expiry the callback of every timer whose expiry is <= @now; each fires
	/// exactly on the first advance that reaches its expiry. Returns the
	/// number of callbacks run. Cost: O(levels) per tick with work plus O(1)
	/// per timer fired or cascaded; idle ticks are free. The wheel's thread.
	/// Throws std::system_error with EINVAL if @now is earlier than now(),
	/// EBUSY if called from one of this wheel's callbacks, and
	/// std::logic_error on a moved-from wheel. Exceptions thrown by
	/// callbacks do not propagate: they go to the exception handler.
	std::size_t advance(tick_t now)
	{
		const long r = twheel_advance(handle(), now);
		if (r < 0)
			throw std::system_error(static_cast<int>(-r), std::generic_category(),
						r == -EBUSY ? "twheel::Wheel::advance from a callback"
							    : "twheel::Wheel::advance backwards");
		return static_cast<std::size_t>(r);
	}

	/// Returns std::nullopt when no timer is pending. Otherwise a tick no
	/// later than the earliest expiry at which advance() has work to do:
	/// that expiry, or a cascade tick before it (advancing to the returned
	/// tick repeatedly reaches the earliest timer in at most
	/// TWHEEL_LEVELS + 1 calls). A result <= now() means a timer is already
	/// due. O(levels); the wheel's thread; noexcept.
	std::optional<tick_t> next_expiry() const noexcept
	{
		if (!ctx_ || twheel_count(ctx_->w) == 0)
			return std::nullopt;
		return twheel_next_expiry(ctx_->w);
	}

	/// Returns the wheel's time in ticks (0 if moved-from). O(1); noexcept.
	tick_t now() const noexcept { return ctx_ ? twheel_now(ctx_->w) : 0; }

	/// Returns the number of pending timers (0 if moved-from). O(1); noexcept.
	std::size_t size() const noexcept { return ctx_ ? twheel_count(ctx_->w) : 0; }

	/// Returns the length of one tick. O(1); noexcept.
	std::chrono::nanoseconds tick_length() const noexcept
	{
		return ctx_ ? ctx_->tick : std::chrono::nanoseconds::zero();
	}

	/// Converts @d to ticks of this wheel, rounding up (see ticks_ceil()).
	template <class Rep, class Period>
	tick_t to_ticks(std::chrono::duration<Rep, Period> d) const noexcept
	{
		return ticks_ceil(d, ctx_ ? ctx_->tick : std::chrono::nanoseconds(1));
	}

	/// Sets the handler that receives exceptions escaping this wheel's
	/// callbacks and cancellation callbacks; an empty function restores the
	/// default (print what() to stderr, carry on). Not while one of the
	/// wheel's callbacks runs the handler. The wheel's thread. Throws
	/// std::logic_error on a moved-from wheel.
	void on_exception(exception_handler h)
	{
		if (!ctx_)
			throw std::logic_error("twheel::Wheel::on_exception on a moved-from wheel");
		ctx_->on_exception = std::move(h);
	}

	/// The C wheel, for calls this class does not wrap (twheel_check(),
	/// twheel_get_stats()). Do not destroy it. nullptr if moved-from.
	c_wheel *native_handle() const noexcept { return ctx_ ? ctx_->w : nullptr; }

private:
	friend class Timer;

	c_wheel *handle() const
	{
		if (!ctx_)
			throw std::logic_error("twheel::Wheel used after being moved from");
		return ctx_->w;
	}

	inline void close() noexcept;

	detail::context *ctx_;
};

/// A timer: a move-only handle that embeds the C struct tw_timer, the
/// callback and an optional cancellation callback. A Timer is bound to one
/// wheel for life; the destructor cancels it.
///
/// The callback is any callable invocable as f() or as f(Timer &) (the
/// second form gets the handle it fired from, e.g. to re-arm itself).
/// Its result is ignored. It runs inside Wheel::advance() on the wheel's
/// thread with the timer already not pending; it may arm, cancel, move or
/// destroy this or any other Timer of the wheel; its captures stay alive
/// until it returns even if it destroys its own Timer (the callable is lent
/// out of the Timer while it runs). Timers armed from a callback fire in a
/// later advance.
class Timer {
public:
	/// Bytes of callable stored inline (no heap allocation): a callable with
	/// sizeof <= 48, alignof <= alignof(void *) and a noexcept move
	/// constructor; e.g. a lambda capturing up to six pointers, or a
	/// std::string and a pointer. Larger callables are heap-allocated once,
	/// when the Timer is built.
	static constexpr std::size_t inline_capacity = 48;
	/// The same, for the cancellation callback (two pointers).
	static constexpr std::size_t cancel_inline_capacity = 16;

	/// An empty Timer: no wheel, no callback; pending() is false, cancel() a
	/// no-op, arming throws. noexcept.
	Timer() noexcept : node_{}, ctx_(nullptr) { tw_timer_init(&node_, nullptr); }

	/// A Timer on @wheel that runs @f when it expires; not armed. O(1);
	/// allocates only if @f does not fit inline (see inline_capacity). The
	/// wheel's thread. Throws what copying/moving @f throws, std::bad_alloc,
	/// std::invalid_argument if @f is a null function pointer, and
	/// std::logic_error if @wheel was moved from.
	template <class F, class D = std::decay_t<F>,
		  class = std::enable_if_t<!std::is_same_v<D, Timer> &&
					   (std::is_invocable_v<D &> || std::is_invocable_v<D &, Timer &>)>>
	Timer(Wheel &wheel, F &&f) : Timer(wheel.ctx_, std::forward<F>(f))
	{
	}

	/// Moves @o here. If @o was pending, this Timer is pending at the same
	/// expiry (the node is re-linked in place, O(1)) and fires once, from
	/// this handle. @o is left empty. Safe inside any callback, including
	/// @o's own (the running callback then returns into this Timer).
	/// noexcept.
	Timer(Timer &&o) noexcept
		: node_(o.node_), ctx_(o.ctx_), fn_(std::move(o.fn_)), cancel_(std::move(o.cancel_))
	{
		relink();
		o.clear_node();
		o.ctx_ = nullptr;
	}

	/// Cancels this Timer (its cancellation callback runs if it was pending),
	/// destroys its callbacks, then moves @o here as the move constructor
	/// does. Self-assignment does nothing. noexcept.
	Timer &operator=(Timer &&o) noexcept
	{
		if (this == &o)
			return *this;
		cancel();
		fn_.reset();
		cancel_.reset();
		node_ = o.node_;
		ctx_ = o.ctx_;
		fn_.take(o.fn_);
		cancel_.take(o.cancel_);
		relink();
		o.clear_node();
		o.ctx_ = nullptr;
		return *this;
	}

	Timer(const Timer &) = delete;
	Timer &operator=(const Timer &) = delete;

	/// Cancels the timer if it is pending (running its cancellation
	/// callback), then destroys the callbacks. O(1); the wheel's thread;
	/// safe inside any callback, including this timer's own. noexcept.
	~Timer()
	{
		cancel();
	}

	/// Arms the timer to fire at tick @expiry, whether or not it is pending
	/// (the C twheel_mod()). An expiry at or before the wheel's time fires in
	/// the next advance. Returns true if it was pending (a re-arm). O(1); the
	/// wheel's thread, callbacks included. Throws std::logic_error on an
	/// empty Timer; no other exception.
	bool arm_at(tick_t expiry)
	{
		if (!ctx_)
			throw std::logic_error("twheel::Timer::arm_at on an empty timer");
		const int r = twheel_mod(ctx_->w, &node_, expiry);
		if (r < 0)
			throw std::system_error(-r, std::generic_category(), "twheel_mod");
		return r == 1;
	}

	/// Arms the timer to fire @d after the wheel's current time, @d rounded
	/// up to whole ticks (never early; zero or negative means the next
	/// advance; saturates at tick_max). Returns true if it was pending.
	/// O(1); the wheel's thread. Throws as arm_at().
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		if (!ctx_)
			throw std::logic_error("twheel::Timer::arm_in on an empty timer");
		return arm_at(detail::add_sat(ctx_->now(), ticks_ceil(d, ctx_->tick)));
	}

	/// Disarms the timer. Returns true if it was pending; then the
	/// cancellation callback (if any) runs before cancel() returns. Never
	/// runs the expiry callback. Harmless on a timer that is not pending.
	/// O(1); the wheel's thread, callbacks included. noexcept: exceptions
	/// from the cancellation callback go to the wheel's exception handler.
	bool cancel() noexcept
	{
		// Touches only the node's cache line unless there is a
		// cancellation callback (flagged in node_.flags). Pending is
		// checked first: a timer that is not pending may outlive its
		// wheel, and its context with it.
		if (!tw_timer_pending(&node_))
			return false;
		twheel_del(ctx_->w, &node_);
		if (node_.flags & has_cancel_flag)
			cancel_.call_lent_erased(&ctx_->on_exception);
		return true;
	}

	/// Returns true if the timer is armed and has neither fired nor been
	/// cancelled. False inside its own callback (unless re-armed there).
	/// O(1); noexcept.
	bool pending() const noexcept { return tw_timer_pending(&node_); }

	/// Returns the tick the timer is armed for, or std::nullopt if it is
	/// not pending. O(1); noexcept.
	std::optional<tick_t> expiry() const noexcept
	{
		if (!pending())
			return std::nullopt;
		return tw_timer_expires(&node_);
	}

	/// Sets the cancellation callback, invocable as g(); nullptr removes it.
	/// It runs once each time this Timer stops being pending without firing:
	/// cancel() that returns true, destruction or assignment over a pending
	/// Timer, destruction of the wheel. Never on expiry, never on a re-arm.
	/// It must not destroy or move its own Timer while the Timer's destructor
	/// or assignment runs it. Allocates only if @g exceeds
	/// cancel_inline_capacity. Throws as the constructor does for @f.
	template <class G>
	void on_cancel(G &&g)
	{
		using D = std::decay_t<G>;
		cancel_.reset();
		node_.flags &= ~has_cancel_flag;
		if constexpr (std::is_same_v<D, std::nullptr_t>) {
			return;
		} else {
			static_assert(std::is_invocable_v<D &>, "a cancellation callback is invocable as g()");
			using R = std::remove_cv_t<std::remove_reference_t<G>>;
			if constexpr (std::is_pointer_v<R> || std::is_member_pointer_v<R>) {
				if (g == nullptr)
					return;
			}
			cancel_.template emplace<D>(std::forward<G>(g));
			node_.flags |= has_cancel_flag;
		}
	}

	/// True if the Timer has a wheel and a callback (false when default
	/// constructed, moved from, or its wheel was destroyed). noexcept.
	explicit operator bool() const noexcept { return ctx_ != nullptr; }

	/// The embedded C timer (read-only). noexcept.
	const tw_timer *native_handle() const noexcept { return &node_; }

	/// True if callables of type F are stored without a heap allocation.
	template <class F>
	static constexpr bool stores_inline = detail::slot<inline_capacity>::stores_inline<std::decay_t<F>>;

private:
	friend class Wheel;
	friend class Loop;

	template <class F>
	Timer(detail::context *ctx, F &&f) : node_{}, ctx_(ctx)
	{
		using D = std::decay_t<F>;
		if (!ctx_)
			throw std::logic_error("twheel::Timer on a moved-from wheel");
		using R = std::remove_cv_t<std::remove_reference_t<F>>;
		if constexpr (std::is_pointer_v<R> || std::is_member_pointer_v<R>) {
			if (f == nullptr)
				throw std::invalid_argument("twheel::Timer: null function pointer");
		}
		fn_.template emplace<D>(std::forward<F>(f));
		tw_timer_init(&node_, &fire<D>);
	}

	// node_.flags (the owner's field) bit: cancel_ holds a callable.
	static constexpr std::uint32_t has_cancel_flag = 1u;

	static Timer *from_node(tw_timer *n) noexcept { return reinterpret_cast<Timer *>(n); }

	template <class D>
	static void fire(tw_timer *n) noexcept
	{
		Timer *self = from_node(n);
		detail::context *ctx = self->ctx_;
		self->fn_.template call_lent<D>([self, ctx](D &f) noexcept {
			(void)self; // unused when D takes no Timer &
			try {
				if constexpr (std::is_invocable_v<D &, Timer &>)
					(void)std::invoke(f, *self);
				else
					(void)std::invoke(f);
			} catch (...) {
				ctx->report(std::current_exception());
			}
		});
	}

	// Fixes the neighbours' links after node_ was copied from a pending node.
	void relink() noexcept
	{
		if (tw_timer_pending(&node_)) {
			node_.entry.prev->next = &node_.entry;
			node_.entry.next->prev = &node_.entry;
		}
	}

	// Leaves node_ not pending and without a callback.
	void clear_node() noexcept
	{
		tw_timer fresh{};
		tw_timer_init(&fresh, nullptr);
		node_ = fresh;
	}

	// Called by ~Wheel on each timer it unlinks.
	static void drained(tw_timer *n, void *) noexcept
	{
		Timer *t = from_node(n);
		detail::context *ctx = t->ctx_;
		t->ctx_ = nullptr; // the wheel is going away: no re-arming
		if (n->flags & has_cancel_flag)
			t->cancel_.call_lent_erased(ctx ? &ctx->on_exception : nullptr);
	}

	tw_timer node_; // first member: Timer and node_ are pointer-interconvertible
	detail::context *ctx_;
	detail::slot<inline_capacity> fn_;
	detail::slot<cancel_inline_capacity> cancel_;
};

static_assert(std::is_standard_layout_v<Timer>, "Timer must be standard-layout for from_node()");
static_assert(std::is_nothrow_move_constructible_v<Timer> && std::is_nothrow_move_assignable_v<Timer>);
#if !TWHEEL_DEBUG_CHECKS && UINTPTR_MAX == UINT64_MAX
static_assert(sizeof(Timer) == 128, "Timer is documented as 128 bytes on LP64");
#endif

inline void Wheel::close() noexcept
{
	if (!ctx_)
		return;
	twheel_drain(ctx_->w, &Timer::drained, nullptr);
	twheel_destroy(ctx_->w);
	delete ctx_;
	ctx_ = nullptr;
}

} // namespace twheel

#endif // TWHEEL_TWHEEL_HPP
