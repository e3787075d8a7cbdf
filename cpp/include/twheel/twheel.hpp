// SPDX-License-Identifier: MIT
//
// twheel/twheel.hpp - twheel++: thin, header-only RAII handles over the
// libtwheel C wheel (<twheel/twheel.h>). C++17 or later.
//
//   twheel::Wheel   owns a struct twheel; move-only.
//   twheel::Timer   a move-only handle that embeds the struct tw_timer and the
//                   callback; cancels itself when destroyed. (BasicTimer<16>;
//                   twheel::BasicTimer<N> stores N bytes of callable inline.)
//   twheel::TimerHook<Derived>
//                   an intrusive RAII timer: derive from it, write on_timer().
//
// Design
// ======
// A Timer is the C timer plus the callable, in one object (64 bytes on LP64
// in a release build):
//
//     offset  size  field
//          0     8  context *ctx_          (the wheel and its exception handler)
//          8    40  struct tw_timer node_  (func = a trampoline typed on the
//                                            callable; flags = how it is stored)
//         48    16  callable storage
//
// There is no type-erasure pointer: the trampoline in node_.func, which
// fires the timer as the C callback, also moves, destroys and boxes the
// callable when this layer calls it with a fake node flagged node_manage
// (tw_timer.flags is the owner's: the C core never reads or writes it).
// Callables of at most Timer::inline_capacity (16) bytes, alignment at most
// alignof(void *) and a noexcept move constructor are stored inline: no
// heap allocation. twheel::BasicTimer<N> stores N bytes (sizeof 48 + N).
// Larger callables live in a heap block (the "box"), allocated once when the
// Timer is built; the cancellation callback lives in the box too, which the
// first on_cancel() allocates for an inline callable (moving it there).
//
// twheel::TimerHook<Derived> is the intrusive variant: the context pointer
// and the C node (48 bytes), a trampoline that calls Derived::on_timer()
// directly. It costs what the C API costs plus one pointer.
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
// back into whichever Timer now owns it, or is destroyed if none does. A
// boxed callable stays in its box, which a handle destroyed meanwhile leaves
// to the trampoline to free when the call returns.
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
template <std::size_t InlineBytes>
class BasicTimer;
template <class Derived, class Tag>
class TimerHook;

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


// ---- Timer internals -------------------------------------------------------
//
// Bits of tw_timer.flags, a field the C core never reads or writes (it is the
// owner's). Every node owned by this layer carries node_cpp; a manager call
// (below) is recognised by node_manage, which only fake nodes carry.
inline constexpr std::uint32_t node_lent = 1u;      // inline callable lent out (running)
inline constexpr std::uint32_t node_boxed = 2u;     // storage holds a box_base *
inline constexpr std::uint32_t node_cancel = 4u;    // the box has a cancellation callback
inline constexpr std::uint32_t node_trivial = 8u;   // inline callable is trivially relocatable
inline constexpr std::uint32_t node_manage = 1u << 30;
inline constexpr std::uint32_t node_cpp = 1u << 31;

// The same test as tw_timer_pending(), inlined (the encoding is the one
// <twheel/twheel.h> declares: _idx is TW__IDX_NONE when not pending), so
// that cancel() costs no call beyond twheel_del().
inline bool node_pending(const tw_timer *t) noexcept { return t->_idx != TW__IDX_NONE; }

// Leaves *t initialised, not pending, without a callback. (tw_timer_init()
// itself must not see a node that still looks pending: after a move the
// old node does.)
inline void node_clear(tw_timer *t) noexcept
{
	tw_timer fresh;
	tw_timer_init(&fresh, nullptr);
	*t = fresh;
}

// A timer's tw_timer.func is a trampoline typed on its callable; the same
// function also performs the few type-specific operations on the stored
// callable (move it, destroy it, box it, the wheel is going away), so a
// handle needs no separate table pointer. Such a call passes a fake node
// whose flags carry node_manage; the request follows it.
enum class op : unsigned char { relocate, destroy, box, drained };

struct mgr_req {
	tw_timer fake; // first: pointer-interconvertible with the request
	op what;
	bool ok;
	void *a, *b;
};

inline void manage(void (*fn)(tw_timer *), op what, void *a, void *b = nullptr, bool *ok = nullptr) noexcept
{
	mgr_req r;
	std::memset(&r.fake, 0, sizeof r.fake);
	r.fake.flags = node_manage;
	r.what = what;
	r.ok = true;
	r.a = a;
	r.b = b;
	fn(&r.fake);
	if (ok)
		*ok = r.ok;
}

inline constexpr std::size_t box_cancel_capacity = 16;

// The heap part of a timer whose callable is large, or that has a
// cancellation callback (allocated on the first on_cancel()). Stable
// address: while its callable runs the box stays where it is.
struct box_base {
	slot<box_cancel_capacity> cancel;
	void (*destroy)(box_base *) noexcept;
	// The callable's owner was boxed while its inline callable was lent
	// out: the lend guard lives here until the callable comes back.
	lend_guard *guard = nullptr;
	bool has_fn = false;   // fn is constructed
	bool running = false;  // fn (in the box) is running
	bool orphaned = false; // the owner let go while it ran: delete after

	explicit box_base(void (*d)(box_base *) noexcept) noexcept : destroy(d) {}
};

template <class D>
struct box final : box_base {
	alignas(D) unsigned char fn_buf[sizeof(D)];

	box() noexcept : box_base(&destroy_me) {}
	D *fn() noexcept { return std::launder(reinterpret_cast<D *>(fn_buf)); }
	static void destroy_me(box_base *b) noexcept
	{
		auto *self = static_cast<box *>(b);
		if (self->has_fn)
			self->fn()->~D();
		delete self;
	}
};

// twheel_drain() callback of ~Wheel: hands each pending node of this layer
// to its own trampoline (nodes of C timers armed on native_handle() are
// left unlinked, as twheel_destroy() would).
inline void drained(tw_timer *n, void *) noexcept
{
	if (n->flags & node_cpp)
		manage(n->func, op::drained, n);
}

[[noreturn]] inline void throw_empty(const char *what) { throw std::logic_error(what); }
[[noreturn]] inline void throw_errno(int r, const char *what)
{
	throw std::system_error(-r, std::generic_category(), what);
}

#if defined(__GNUC__)
#define TWHEEL_CPP_LIKELY(x) __builtin_expect(!!(x), 1)
#define TWHEEL_CPP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TWHEEL_CPP_LIKELY(x) (x)
#define TWHEEL_CPP_UNLIKELY(x) (x)
#endif

// Arms @t on @w at @e: twheel_add() when it is not pending (the C program
// doing the same job knows it is not), else twheel_mod(). Returns whether
// it was pending. Throws only on a C error (a misuse in a debug build).
inline bool arm_node(c_wheel *w, tw_timer *t, tick_t e)
{
	if (!node_pending(t)) {
		const int r = twheel_add(w, t, e);
		if (TWHEEL_CPP_UNLIKELY(r < 0))
			throw_errno(r, "twheel_add");
		return false;
	}
	const int r = twheel_mod(w, t, e);
	if (TWHEEL_CPP_UNLIKELY(r < 0))
		throw_errno(r, "twheel_mod");
	return true;
}

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
	template <std::size_t>
	friend class BasicTimer;
	template <class, class>
	friend class TimerHook;

	c_wheel *handle() const
	{
		if (!ctx_)
			throw std::logic_error("twheel::Wheel used after being moved from");
		return ctx_->w;
	}

	inline void close() noexcept;

	detail::context *ctx_;
};

/// A timer: a move-only handle that embeds the C struct tw_timer and the
/// callback; bound to one wheel for life; the destructor cancels it.
/// twheel::Timer is BasicTimer<16>; @InlineBytes is how many bytes of
/// callable are stored inside the handle (at least 8).
///
/// Layout (LP64, release build): the wheel's context pointer (8), the
/// 40-byte tw_timer (its func is a trampoline typed on the callable, its
/// flags field says how the callable is stored), then InlineBytes of
/// storage; sizeof(BasicTimer<N>) == 48 + N rounded up to 8 bytes, so
/// sizeof(Timer) == 64, one cache line. A callable that does not fit, and
/// the cancellation callback, live in one heap block ("box").
///
/// The callback is any callable invocable as f() or as f(BasicTimer &) (the
/// second form gets the handle it fired from, e.g. to re-arm itself). Its
/// result is ignored. It runs inside Wheel::advance() on the wheel's thread
/// with the timer already not pending; it may arm, cancel, move or destroy
/// this or any other timer of the wheel; its captures stay alive until it
/// returns even if it destroys its own handle (an inline callable is moved
/// onto the firing stack frame while it runs, a boxed one stays in its box).
/// Timers armed from a callback fire in a later advance.
template <std::size_t InlineBytes>
class BasicTimer {
	static_assert(InlineBytes >= sizeof(void *), "inline storage must hold at least a pointer");

public:
	/// Bytes of callable stored inline (no heap allocation): a callable with
	/// sizeof <= inline_capacity, alignof <= alignof(void *) and a noexcept
	/// move constructor. For Timer: 16 bytes, e.g. [this], [this, id],
	/// [&a, &b], a function pointer. Larger callables are heap-allocated
	/// once, when the handle is built (use BasicTimer<N> for more room).
	static constexpr std::size_t inline_capacity = InlineBytes;
	/// Bytes of cancellation callback stored without a further allocation
	/// in the box that on_cancel() allocates (two pointers).
	static constexpr std::size_t cancel_inline_capacity = detail::box_cancel_capacity;

	/// True if callables of type F are stored without a heap allocation.
	template <class F>
	static constexpr bool stores_inline = sizeof(std::decay_t<F>) <= InlineBytes &&
					      alignof(std::decay_t<F>) <= alignof(void *) &&
					      std::is_nothrow_move_constructible_v<std::decay_t<F>>;

	/// An empty handle: no wheel, no callback; pending() is false, cancel()
	/// a no-op, arming throws. noexcept.
	BasicTimer() noexcept : ctx_(nullptr) { detail::node_clear(&node_); }

	/// A timer on @wheel that runs @f when it expires; not armed. O(1);
	/// allocates only if @f does not fit inline (see inline_capacity). The
	/// wheel's thread. Throws what copying/moving @f throws, std::bad_alloc,
	/// std::invalid_argument if @f is a null function pointer, and
	/// std::logic_error if @wheel was moved from.
	template <class F, class D = std::decay_t<F>,
		  class = std::enable_if_t<!std::is_same_v<D, BasicTimer> &&
					   (std::is_invocable_v<D &> || std::is_invocable_v<D &, BasicTimer &>)>>
	BasicTimer(Wheel &wheel, F &&f);

	/// Moves @o here. If @o was pending, this handle is pending at the same
	/// expiry (the node is re-linked in place, O(1)) and fires once, from
	/// this handle. @o is left empty. Safe inside any callback, including
	/// @o's own (the running callback then returns into this handle).
	/// noexcept.
	BasicTimer(BasicTimer &&o) noexcept : ctx_(o.ctx_), node_(o.node_)
	{
		relink();
		take_storage(o);
		detail::node_clear(&o.node_);
		o.ctx_ = nullptr;
	}

	/// Cancels this timer (its cancellation callback runs if it was
	/// pending), destroys its callbacks, then moves @o here as the move
	/// constructor does. Self-assignment does nothing. noexcept.
	BasicTimer &operator=(BasicTimer &&o) noexcept
	{
		if (this == &o)
			return *this;
		cancel();
		release_storage();
		node_ = o.node_;
		ctx_ = o.ctx_;
		relink();
		take_storage(o);
		detail::node_clear(&o.node_);
		o.ctx_ = nullptr;
		return *this;
	}

	BasicTimer(const BasicTimer &) = delete;
	BasicTimer &operator=(const BasicTimer &) = delete;

	/// Cancels the timer if it is pending (running its cancellation
	/// callback), then destroys the callbacks. O(1); the wheel's thread;
	/// safe inside any callback, including this timer's own. noexcept.
	~BasicTimer()
	{
		cancel();
		release_storage();
	}

	/// Arms the timer to fire at tick @expiry, whether or not it is pending
	/// (twheel_add() if it is not, twheel_mod() if it is). An expiry at or
	/// before the wheel's time fires in the next advance. Returns true if it
	/// was pending (a re-arm). O(1): one C call, nothing loaded but the
	/// handle's wheel pointer (in the same cache line as the node in a
	/// 64-byte-aligned handle). The wheel's thread, callbacks included.
	/// Throws std::logic_error on an empty handle; no other exception.
	bool arm_at(tick_t expiry)
	{
		detail::context *c = ctx_;
		if (TWHEEL_CPP_UNLIKELY(!c))
			detail::throw_empty("twheel::Timer::arm_at on an empty timer");
		return detail::arm_node(c->w, &node_, expiry);
	}

	/// Arms the timer to fire @d after the wheel's current time, @d rounded
	/// up to whole ticks (never early; zero or negative means the next
	/// advance; saturates at tick_max). Returns true if it was pending.
	/// O(1); the wheel's thread. Throws as arm_at().
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		detail::context *c = ctx_;
		if (TWHEEL_CPP_UNLIKELY(!c))
			detail::throw_empty("twheel::Timer::arm_in on an empty timer");
		return detail::arm_node(c->w, &node_, detail::add_sat(c->now(), ticks_ceil(d, c->tick)));
	}

	/// Disarms the timer. Returns true if it was pending; then the
	/// cancellation callback (if any) runs before cancel() returns. Never
	/// runs the expiry callback. Harmless on a timer that is not pending.
	/// O(1): one C call (none if not pending); the cancellation callback's
	/// box is only touched if there is one. The wheel's thread, callbacks
	/// included. noexcept: exceptions from the cancellation callback go to
	/// the wheel's exception handler.
	bool cancel() noexcept
	{
		// Pending is checked first: a timer that is not pending may
		// outlive its wheel, and its context with it.
		if (!detail::node_pending(&node_))
			return false;
		twheel_del(ctx_->w, &node_);
		if (TWHEEL_CPP_UNLIKELY(node_.flags & detail::node_cancel))
			run_cancel(ctx_);
		return true;
	}

	/// Returns true if the timer is armed and has neither fired nor been
	/// cancelled. False inside its own callback (unless re-armed there).
	/// O(1); noexcept.
	bool pending() const noexcept { return detail::node_pending(&node_); }

	/// Returns the tick the timer is armed for, or std::nullopt if it is
	/// not pending. O(1); noexcept.
	std::optional<tick_t> expiry() const noexcept
	{
		if (!pending())
			return std::nullopt;
		return tw_timer_expires(&node_);
	}

	/// Sets the cancellation callback, invocable as g(); nullptr removes it.
	/// It runs once each time this timer stops being pending without firing:
	/// cancel() that returns true, destruction or assignment over a pending
	/// timer, destruction of the wheel. Never on expiry, never on a re-arm.
	/// It must not destroy or move its own handle while the handle's
	/// destructor or assignment runs it. The first call on a handle whose
	/// callable is inline allocates the box (the callable moves into it);
	/// @g itself is stored in the box if it has at most
	/// cancel_inline_capacity bytes, else allocated once more. Throws as
	/// the constructor does for @f, and std::logic_error on a handle without
	/// a callback (default-constructed or moved from).
	template <class G>
	void on_cancel(G &&g)
	{
		using D = std::decay_t<G>;
		if constexpr (std::is_same_v<D, std::nullptr_t>) {
			clear_cancel();
		} else {
			static_assert(std::is_invocable_v<D &>, "a cancellation callback is invocable as g()");
			using R = std::remove_cv_t<std::remove_reference_t<G>>;
			if constexpr (std::is_pointer_v<R> || std::is_member_pointer_v<R>) {
				if (g == nullptr) {
					clear_cancel();
					return;
				}
			}
			detail::box_base *b = ensure_box();
			b->cancel.reset();
			node_.flags &= ~detail::node_cancel;
			b->cancel.template emplace<D>(std::forward<G>(g));
			node_.flags |= detail::node_cancel;
		}
	}

	/// True if the handle has a wheel and a callback (false when default
	/// constructed, moved from, or its wheel was destroyed). noexcept.
	explicit operator bool() const noexcept { return ctx_ != nullptr; }

	/// The embedded C timer (read-only). noexcept.
	const tw_timer *native_handle() const noexcept { return &node_; }

private:
	static BasicTimer *from_node(tw_timer *n) noexcept
	{
		return reinterpret_cast<BasicTimer *>(reinterpret_cast<char *>(n) - offsetof(BasicTimer, node_));
	}

	void *buf() noexcept { return static_cast<void *>(buf_); }
	template <class P>
	P *load_ptr() const noexcept
	{
		P *p;
		std::memcpy(&p, buf_, sizeof p);
		return p;
	}
	template <class P>
	void store_ptr(P *p) noexcept
	{
		std::memcpy(buf_, &p, sizeof p);
	}

	// Fixes the neighbours' links after node_ was copied from a pending node.
	void relink() noexcept
	{
		if (detail::node_pending(&node_)) {
			node_.entry.prev->next = &node_.entry;
			node_.entry.next->prev = &node_.entry;
		}
	}

	// Takes @o's callable (node_ already holds a copy of o.node_, flags
	// included). @o's storage is left dead; the caller clears o.node_.
	void take_storage(BasicTimer &o) noexcept
	{
		const std::uint32_t f = node_.flags;
		if (!node_.func)
			return;
		if (f & detail::node_boxed) {
			store_ptr(o.template load_ptr<detail::box_base>());
			if (f & detail::node_lent)
				load_ptr<detail::box_base>()->guard->slot = this;
		} else if (f & detail::node_lent) {
			store_ptr(o.template load_ptr<detail::lend_guard>());
			load_ptr<detail::lend_guard>()->slot = this;
		} else if (f & detail::node_trivial) {
			std::memcpy(buf_, o.buf_, InlineBytes);
		} else {
			detail::manage(node_.func, detail::op::relocate, o.buf(), buf());
		}
	}

	// Destroys the callable and the box (or, if the callable is running,
	// lets the trampoline do so when it returns). node_ keeps its func.
	void release_storage() noexcept
	{
		const std::uint32_t f = node_.flags;
		if (!node_.func)
			return;
		if (f & detail::node_boxed) {
			auto *b = load_ptr<detail::box_base>();
			if (f & detail::node_lent)
				b->guard->slot = nullptr; // the trampoline destroys the callable
			if (b->running)
				b->orphaned = true; // the trampoline deletes the box
			else
				b->destroy(b);
		} else if (f & detail::node_lent) {
			load_ptr<detail::lend_guard>()->slot = nullptr;
		} else if (!(f & detail::node_trivial)) {
			detail::manage(node_.func, detail::op::destroy, buf());
		}
		node_.flags = f & ~(detail::node_boxed | detail::node_lent | detail::node_cancel);
	}

	detail::box_base *ensure_box()
	{
		if (!node_.func)
			detail::throw_empty("twheel::Timer::on_cancel on a timer without a callback");
		if (!(node_.flags & detail::node_boxed)) {
			bool ok = true;
			detail::manage(node_.func, detail::op::box, this, nullptr, &ok);
			if (!ok)
				throw std::bad_alloc();
		}
		return load_ptr<detail::box_base>();
	}

	void clear_cancel() noexcept
	{
		if (node_.flags & detail::node_cancel) {
			load_ptr<detail::box_base>()->cancel.reset();
			node_.flags &= ~detail::node_cancel;
		}
	}

	// Runs the cancellation callback (cold: only timers that have one).
	void run_cancel(detail::context *ctx) noexcept
	{
		load_ptr<detail::box_base>()->cancel.call_lent_erased(ctx ? &ctx->on_exception : nullptr);
	}

	template <class D>
	static void invoke(D &f, BasicTimer &self, detail::context *ctx) noexcept
	{
		try {
			if constexpr (std::is_invocable_v<D &, BasicTimer &>)
				(void)std::invoke(f, self);
			else
				(void)std::invoke(f);
		} catch (...) {
			if (ctx)
				ctx->report(std::current_exception());
			else
				detail::report(nullptr, std::current_exception());
		}
	}

	// The C callback (and the manager) of timers holding a D.
	template <class D>
	static void trampoline(tw_timer *n) noexcept
	{
		if (TWHEEL_CPP_UNLIKELY(n->flags & detail::node_manage)) {
			manage_op<D>(*reinterpret_cast<detail::mgr_req *>(n));
			return;
		}
		BasicTimer *self = from_node(n);
		detail::context *ctx = self->ctx_;
		if constexpr (stores_inline<D>) {
			if (TWHEEL_CPP_LIKELY(!(n->flags & detail::node_boxed))) {
				// Lend the callable: move it onto this frame, leave a
				// guard that follows the handle through moves.
				D *src = std::launder(reinterpret_cast<D *>(self->buf_));
				alignas(D) unsigned char tmp[sizeof(D)];
				D *f = ::new (static_cast<void *>(tmp)) D(std::move(*src));
				src->~D();
				detail::lend_guard g{self};
				self->store_ptr(&g);
				n->flags |= detail::node_lent;
				invoke<D>(*f, *self, ctx);
#if defined(__GNUC__)
				// The callback may have moved, boxed or destroyed the
				// handle: forget what the compiler knows about it (else
				// GCC's -Warray-bounds takes the guard for the box).
				__asm__ __volatile__("" : : "r"(&g) : "memory");
#endif
				if (g.slot) {
					auto *owner = static_cast<BasicTimer *>(g.slot);
					if (owner->node_.flags & detail::node_boxed) {
						// boxed (on_cancel()) while it ran
						auto *b = static_cast<detail::box<D> *>(owner->template load_ptr<detail::box_base>());
						::new (static_cast<void *>(b->fn_buf)) D(std::move(*f));
						b->has_fn = true;
						b->guard = nullptr;
					} else {
						::new (owner->buf()) D(std::move(*f));
					}
					owner->node_.flags &= ~detail::node_lent;
				}
				f->~D();
				return;
			}
		}
		auto *b = static_cast<detail::box<D> *>(self->template load_ptr<detail::box_base>());
		b->running = true;
		invoke<D>(*b->fn(), *self, ctx);
		if (b->orphaned)
			b->destroy(b);
		else
			b->running = false;
	}

	template <class D>
	static void manage_op(detail::mgr_req &r) noexcept
	{
		switch (r.what) {
		case detail::op::relocate:
			if constexpr (stores_inline<D>) {
				D *s = std::launder(static_cast<D *>(r.a));
				::new (r.b) D(std::move(*s));
				s->~D();
			}
			break;
		case detail::op::destroy:
			if constexpr (stores_inline<D>)
				std::launder(static_cast<D *>(r.a))->~D();
			break;
		case detail::op::box: {
			auto *self = static_cast<BasicTimer *>(r.a);
			detail::box<D> *b;
			try {
				b = new detail::box<D>(); // the replaceable operator new
			} catch (...) {
				r.ok = false; // on_cancel() throws std::bad_alloc
				break;
			}
			if constexpr (stores_inline<D>) {
				if (self->node_.flags & detail::node_lent) {
					// The callable is running: it comes back into the box.
					b->guard = self->template load_ptr<detail::lend_guard>();
				} else {
					D *s = std::launder(reinterpret_cast<D *>(self->buf_));
					::new (static_cast<void *>(b->fn_buf)) D(std::move(*s));
					s->~D();
					b->has_fn = true;
				}
			}
			self->store_ptr(static_cast<detail::box_base *>(b));
			self->node_.flags = (self->node_.flags & ~detail::node_trivial) | detail::node_boxed;
			break;
		}
		case detail::op::drained: {
			BasicTimer *t = from_node(static_cast<tw_timer *>(r.a));
			detail::context *ctx = t->ctx_;
			t->ctx_ = nullptr; // the wheel is going away: no re-arming
			if (t->node_.flags & detail::node_cancel)
				t->run_cancel(ctx);
			break;
		}
		}
	}

	// The wheel pointer right before the node: a re-arm touches the
	// context pointer and the node's first 16 bytes, 24 contiguous bytes
	// (one cache line far more often than if the pointer followed the node).
	detail::context *ctx_;
	tw_timer node_;
	alignas(void *) unsigned char buf_[InlineBytes];
};

/// The timer handle: 16 bytes of callable inline, 64 bytes in all (LP64,
/// release build).
using Timer = BasicTimer<16>;

template <std::size_t N>
template <class F, class D, class>
BasicTimer<N>::BasicTimer(Wheel &wheel, F &&f) : ctx_(wheel.ctx_), node_{}
{
	if (!ctx_)
		detail::throw_empty("twheel::Timer on a moved-from wheel");
	using R = std::remove_cv_t<std::remove_reference_t<F>>;
	if constexpr (std::is_pointer_v<R> || std::is_member_pointer_v<R>) {
		if (f == nullptr)
			throw std::invalid_argument("twheel::Timer: null function pointer");
	}
	std::uint32_t flags = detail::node_cpp;
	if constexpr (stores_inline<D>) {
		::new (buf()) D(std::forward<F>(f));
		if constexpr (std::is_trivially_copyable_v<D> && std::is_trivially_destructible_v<D>)
			flags |= detail::node_trivial;
	} else {
		auto *b = new detail::box<D>();
		try {
			::new (static_cast<void *>(b->fn_buf)) D(std::forward<F>(f));
		} catch (...) {
			delete b;
			throw;
		}
		b->has_fn = true;
		store_ptr(static_cast<detail::box_base *>(b));
		flags |= detail::node_boxed;
	}
	tw_timer_init(&node_, &trampoline<D>);
	node_.flags = flags;
}

#if !TWHEEL_DEBUG_CHECKS && UINTPTR_MAX == UINT64_MAX
static_assert(sizeof(Timer) == 64, "Timer is documented as 64 bytes on LP64");
static_assert(sizeof(BasicTimer<24>) == 72 && sizeof(BasicTimer<48>) == 96);
#endif
static_assert(std::is_standard_layout_v<Timer>, "Timer must be standard-layout for offsetof in from_node()");
static_assert(std::is_nothrow_move_constructible_v<Timer> && std::is_nothrow_move_assignable_v<Timer>);

/// An intrusive timer for the C API's cost with RAII: derive from
/// TimerHook<Derived> (publicly) and give Derived a member on_timer() (or
/// on_timer(Tag) when Tag is not void; several hooks with different tags may
/// live in one object). The hook is the C tw_timer plus the wheel's context
/// pointer: 48 bytes, no callable, no type erasure; the C callback is
/// resolved at compile time and calls Derived::on_timer() directly.
///
/// Semantics as for Timer: the destructor cancels (it runs after
/// ~Derived, so on_timer() never runs on a destroyed object); moving a
/// pending hook re-links its node (Derived's move constructor and move
/// assignment must move the base, as the defaulted ones do); move
/// assignment cancels the target first; self-assignment does nothing.
/// on_timer() runs inside Wheel::advance() with the hook not pending and may
/// re-arm, cancel, move or destroy its own object (even `delete this`):
/// nothing touches the object after on_timer() returns. Exceptions from
/// on_timer() go to the wheel's exception handler (a noexcept on_timer()
/// costs no handler at all). There is no cancellation callback: cancel()
/// says whether the timer was pending, and the owner knows it is being
/// destroyed. All members: the wheel's thread.
template <class Derived, class Tag = void>
class TimerHook {
public:
	/// An unbound hook: arming throws until bind(). noexcept.
	TimerHook() noexcept : ctx_(nullptr), node_{} { init(); }

	/// A hook on @wheel, not armed. Throws std::logic_error if @wheel was
	/// moved from. O(1).
	explicit TimerHook(Wheel &wheel) : ctx_(wheel.ctx_), node_{}
	{
		if (!ctx_)
			detail::throw_empty("twheel::TimerHook on a moved-from wheel");
		init();
	}

	/// Re-links a pending hook into this object (O(1)); @o is left unbound
	/// and not pending. noexcept.
	TimerHook(TimerHook &&o) noexcept : ctx_(o.ctx_), node_(o.node_)
	{
		relink();
		detail::node_clear(&o.node_);
		o.node_.flags = detail::node_cpp;
		o.node_.func = &trampoline;
		o.ctx_ = nullptr;
	}

	/// Cancels this hook, then takes @o's as the move constructor does.
	/// Self-assignment does nothing. noexcept.
	TimerHook &operator=(TimerHook &&o) noexcept
	{
		if (this != &o) {
			cancel();
			node_ = o.node_;
			ctx_ = o.ctx_;
			relink();
			detail::node_clear(&o.node_);
			o.node_.flags = detail::node_cpp;
			o.node_.func = &trampoline;
			o.ctx_ = nullptr;
		}
		return *this;
	}

	TimerHook(const TimerHook &) = delete;
	TimerHook &operator=(const TimerHook &) = delete;

	/// Cancels the timer if pending. O(1); noexcept.
	~TimerHook() { cancel(); }

	/// Binds the hook to @wheel (cancelling it first if pending). Throws
	/// std::logic_error if @wheel was moved from.
	void bind(Wheel &wheel)
	{
		if (!wheel.ctx_)
			detail::throw_empty("twheel::TimerHook::bind to a moved-from wheel");
		cancel();
		ctx_ = wheel.ctx_;
	}

	/// As Timer::arm_at(): twheel_add() or twheel_mod(); true if it was
	/// pending. Throws std::logic_error on an unbound hook.
	bool arm_at(tick_t expiry)
	{
		detail::context *c = ctx_;
		if (TWHEEL_CPP_UNLIKELY(!c))
			detail::throw_empty("twheel::TimerHook::arm_at on an unbound hook");
		return detail::arm_node(c->w, &node_, expiry);
	}

	/// As Timer::arm_in().
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		detail::context *c = ctx_;
		if (TWHEEL_CPP_UNLIKELY(!c))
			detail::throw_empty("twheel::TimerHook::arm_in on an unbound hook");
		return detail::arm_node(c->w, &node_, detail::add_sat(c->now(), ticks_ceil(d, c->tick)));
	}

	/// Disarms; true if it was pending. O(1): one C call (none if not
	/// pending). noexcept.
	bool cancel() noexcept
	{
		if (!detail::node_pending(&node_))
			return false;
		twheel_del(ctx_->w, &node_);
		return true;
	}

	/// Armed and neither fired nor cancelled. noexcept.
	bool pending() const noexcept { return detail::node_pending(&node_); }

	/// The tick it is armed for, or nullopt. noexcept.
	std::optional<tick_t> expiry() const noexcept
	{
		if (!pending())
			return std::nullopt;
		return tw_timer_expires(&node_);
	}

	/// True if bound to a (live) wheel. noexcept.
	explicit operator bool() const noexcept { return ctx_ != nullptr; }

	/// The embedded C timer (read-only). noexcept.
	const tw_timer *native_handle() const noexcept { return &node_; }

private:
	void init() noexcept
	{
		tw_timer_init(&node_, &trampoline);
		node_.flags = detail::node_cpp;
	}

	void relink() noexcept
	{
		if (detail::node_pending(&node_)) {
			node_.entry.prev->next = &node_.entry;
			node_.entry.next->prev = &node_.entry;
		}
	}

	static TimerHook *from_node(tw_timer *n) noexcept
	{
		return reinterpret_cast<TimerHook *>(reinterpret_cast<char *>(n) - offsetof(TimerHook, node_));
	}

	static constexpr bool call_noexcept() noexcept
	{
		if constexpr (std::is_void_v<Tag>)
			return noexcept(std::declval<Derived &>().on_timer());
		else
			return noexcept(std::declval<Derived &>().on_timer(Tag{}));
	}

	static void call(Derived &d)
	{
		if constexpr (std::is_void_v<Tag>)
			d.on_timer();
		else
			d.on_timer(Tag{});
	}

	static void trampoline(tw_timer *n) noexcept
	{
		if (TWHEEL_CPP_UNLIKELY(n->flags & detail::node_manage)) {
			auto &r = *reinterpret_cast<detail::mgr_req *>(n);
			if (r.what == detail::op::drained)
				from_node(static_cast<tw_timer *>(r.a))->ctx_ = nullptr;
			return;
		}
		TimerHook *h = from_node(n);
		Derived &d = static_cast<Derived &>(*h);
		static_assert(std::is_standard_layout_v<TimerHook>, "from_node() needs a standard-layout hook");
		if constexpr (call_noexcept()) {
			call(d);
		} else {
			detail::context *ctx = h->ctx_; // the object may be gone afterwards
			try {
				call(d);
			} catch (...) {
				detail::report(ctx ? &ctx->on_exception : nullptr, std::current_exception());
			}
		}
	}

	detail::context *ctx_; // right before the node, as in BasicTimer
	tw_timer node_;
};

inline void Wheel::close() noexcept
{
	if (!ctx_)
		return;
	twheel_drain(ctx_->w, &detail::drained, nullptr);
	twheel_destroy(ctx_->w);
	delete ctx_;
	ctx_ = nullptr;
}

} // namespace twheel

#endif // TWHEEL_TWHEEL_HPP
