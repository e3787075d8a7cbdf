// SPDX-License-Identifier: MIT
//
// twheel/twheel.hpp - a thin, header-only C++17 layer over the libtwheel
// wheel (<twheel/twheel.h>), in namespace tw:
//
//   tw::Wheel               owns a struct twheel; move-only.
//   tw::Timer               a move-only handle: a struct tw_timer plus a
//                           callable stored inline (16 bytes) or on the heap;
//                           cancels itself when destroyed.
//   tw::TimerHook<Derived>  an intrusive timer: derive from it, write
//                           on_timer(); no callable is stored.
//
// Each handle is a struct tw_timer driven through the public C API only:
// twheel_add/mod/del, twheel_move() when a handle moves (a pending handle
// stays pending at the same expiry and fires once, from its new address),
// twheel_drain() when the wheel goes away.
//
// Lifetime. A Wheel and its handles share a small control block; the
// handles keep it alive, so every handle stays safe to observe after its
// Wheel is destroyed: operator bool and pending() are false, cancel()
// returns false, the destructor and moves work, arming throws
// std::logic_error. Destroying a Wheel cancels its pending Timers (their
// cancellation callbacks run) without firing them.
//
// Callbacks run inside Wheel::advance() on the wheel's thread, with the
// timer already not pending. A Timer's callable is moved out of the handle
// for the duration of the call and moved back afterwards (unless the handle
// was destroyed or given a new callable meanwhile): a callback may destroy,
// move or re-assign its own handle and still use its captures.
//
// Exceptions never cross a C frame: whatever escapes a callback or a
// cancellation callback is caught and handed to the wheel's exception
// handler (Wheel::on_exception(); by default what() is printed to stderr),
// and the advance carries on.
//
// Threads: as in C, a wheel and its handles belong to one thread at a time.
#ifndef TWHEEL_TWHEEL_HPP
#define TWHEEL_TWHEEL_HPP

#include <twheel/twheel.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace tw {

/// Absolute time on a wheel, in ticks (the C tw_tick_t).
using tick_t = tw_tick_t;

/// The largest tick; conversions saturate here.
inline constexpr tick_t tick_max = TW_TICK_MAX;

/// Receives every exception that escapes a callback, on the thread that ran
/// the callback. Whatever it throws is printed to stderr and dropped.
using exception_handler = std::function<void(std::exception_ptr)>;

/// Converts @d to whole ticks of length @tick (positive), rounding up so
/// that a timer armed @d from now never fires early. Zero, negative and NaN
/// durations give 0; anything beyond the range of tick_t gives tick_max.
/// Exact for every integer std::chrono::duration (any period, no overflow);
/// floating-point durations are converted through long double.
/// O(1); any thread.
template <class Rep, class Period>
tick_t ticks_ceil(std::chrono::duration<Rep, Period> d, std::chrono::nanoseconds tick) noexcept
{
	static_assert(std::is_arithmetic_v<Rep>, "ticks_ceil() takes an arithmetic duration");
	if (!(d.count() > 0) || tick.count() <= 0)
		return 0;
	// d in nanoseconds is count * N / D
	using ns = std::ratio_divide<Period, std::nano>;
	if constexpr (std::is_floating_point_v<Rep>) {
		const long double t = static_cast<long double>(d.count()) * ns::num / ns::den / tick.count();
		if (!(t < static_cast<long double>(tick_max)))
			return tick_max;
		const auto whole = static_cast<tick_t>(t);
		return static_cast<long double>(whole) < t ? whole + 1 : whole;
	} else {
		static_assert(sizeof(Rep) <= 8, "ticks_ceil() takes a duration of at most 64 bits");
		__extension__ using u128 = unsigned __int128;
		// each factor is below 2^64: neither product overflows 128 bits
		const u128 p = static_cast<u128>(static_cast<std::uint64_t>(d.count())) *
			       static_cast<std::uint64_t>(ns::num);
		const u128 q = static_cast<u128>(static_cast<std::uint64_t>(ns::den)) *
			       static_cast<std::uint64_t>(tick.count());
		const u128 n = p / q + (p % q != 0);
		return n >= tick_max ? tick_max : static_cast<tick_t>(n);
	}
}

class Wheel;
class Timer;

namespace detail {

inline void report(const exception_handler &h, std::exception_ptr e) noexcept
{
	try {
		if (h)
			h(e);
		else
			std::rethrow_exception(e);
	} catch (const std::exception &x) {
		std::fprintf(stderr, "twheel: a callback threw: %s\n", x.what());
	} catch (...) {
		std::fprintf(stderr, "twheel: a callback threw a non-std exception\n");
	}
}

// Calls @f(args...); an exception goes to @h. Never throws.
template <class F, class... A>
void guarded(const exception_handler &h, F &f, A &&...args) noexcept
{
	try {
		f(std::forward<A>(args)...);
	} catch (...) {
		report(h, std::current_exception());
	}
}

[[noreturn]] inline void throw_errno(int neg, const char *what)
{
	throw std::system_error(-neg, std::generic_category(), what);
}

// The one way this layer stores a callable: a move-only, type-erased
// function of (A...), kept in N bytes inline when it fits (size, alignment
// and a noexcept move), else in one heap block.
template <std::size_t N, class... A>
class fn {
	static_assert(N >= sizeof(void *), "fn stores at least a pointer inline");

	struct ops {
		void (*call)(void *, A...);
		void (*move)(void *dst, void *src) noexcept; // and destroy src
		void (*destroy)(void *) noexcept;
	};
	template <class F>
	static void call_f(F &f, A... a)
	{
		if constexpr (std::is_invocable_v<F &, A...>)
			f(a...);
		else
			f(); // the callable ignores the arguments
	}
	template <class F>
	struct inline_ops {
		static F *get(void *p) noexcept { return std::launder(static_cast<F *>(p)); }
		static void call(void *p, A... a) { call_f(*get(p), a...); }
		static void move(void *d, void *s) noexcept
		{
			::new (d) F(std::move(*get(s)));
			get(s)->~F();
		}
		static void destroy(void *p) noexcept { get(p)->~F(); }
		static constexpr ops table{&call, &move, &destroy};
	};
	template <class F>
	struct heap_ops {
		static F *&get(void *p) noexcept { return *std::launder(static_cast<F **>(p)); }
		static void call(void *p, A... a) { call_f(*get(p), a...); }
		static void move(void *d, void *s) noexcept { ::new (d) F *(get(s)); }
		static void destroy(void *p) noexcept { delete get(p); }
		static constexpr ops table{&call, &move, &destroy};
	};

public:
	template <class F>
	static constexpr bool fits = sizeof(F) <= N && alignof(F) <= alignof(void *) &&
				     std::is_nothrow_move_constructible_v<F>;

	fn() noexcept = default;
	fn(fn &&o) noexcept { take(o); }
	fn &operator=(fn &&o) noexcept
	{
		if (this != &o) {
			reset();
			take(o);
		}
		return *this;
	}
	fn(const fn &) = delete;
	fn &operator=(const fn &) = delete;
	~fn() { reset(); }

	// Stores @f (a null function pointer or empty std::function gives an
	// empty fn). Throws what copying @f or operator new throws.
	template <class F>
	void emplace(F &&f)
	{
		using D = std::decay_t<F>;
		static_assert(std::is_invocable_v<D &, A...> || std::is_invocable_v<D &>,
			      "the callable must be invocable with the documented arguments, or none");
		reset();
		if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D>)
			if (f == nullptr)
				return;
		if constexpr (fits<D>) {
			::new (static_cast<void *>(buf_)) D(std::forward<F>(f));
			ops_ = &inline_ops<D>::table;
		} else {
			::new (static_cast<void *>(buf_)) D *(new D(std::forward<F>(f)));
			ops_ = &heap_ops<D>::table;
		}
	}
	void reset() noexcept
	{
		if (ops_)
			std::exchange(ops_, nullptr)->destroy(buf_);
	}
	explicit operator bool() const noexcept { return ops_ != nullptr; }
	void operator()(A... a) { ops_->call(buf_, a...); }

private:
	void take(fn &o) noexcept
	{
		if (o.ops_) {
			o.ops_->move(buf_, o.buf_);
			ops_ = std::exchange(o.ops_, nullptr);
		}
	}

	const ops *ops_ = nullptr;
	alignas(void *) unsigned char buf_[N];
};

// What a Wheel shares with its handles: the C wheel (nullptr once the
// Wheel is gone), the tick, the exception handler, the Timer whose callback
// is running, and a count of owners (the Wheel and each bound handle).
struct wheel_ctx {
	::twheel *w = nullptr;
	std::chrono::nanoseconds tick{};
	exception_handler on_exception;
	const void *firing = nullptr;
	std::size_t refs = 1;
};

// Counting the owners of a control block (a wheel_ctx, a loop_ctx).
template <class C>
C *retain(C *c) noexcept
{
	if (c)
		c->refs++;
	return c;
}

template <class C>
void release(C *c) noexcept
{
	if (c && --c->refs == 0)
		delete c;
}

// The part Timer and TimerHook share: a struct tw_timer and the control
// block of its wheel. Standard-layout, so that the C node leads back to it.
class handle {
public:
	handle(const handle &) = delete;
	handle &operator=(const handle &) = delete;

	/// True if the handle is bound to a wheel that still exists (and, for
	/// a Timer, has a callable). O(1); noexcept.
	explicit operator bool() const noexcept { return ctx_ && ctx_->w && node_.func; }

	/// True if the timer is armed and has neither fired nor been
	/// cancelled; false inside its own callback unless re-armed there, and
	/// false once the wheel is gone. O(1); noexcept.
	bool pending() const noexcept { return ctx_ && ctx_->w && tw_timer_pending(&node_); }

	/// The tick the timer is armed for, or std::nullopt if not pending.
	std::optional<tick_t> expiry() const noexcept
	{
		return pending() ? std::optional<tick_t>(tw_timer_expires(&node_)) : std::nullopt;
	}

	/// The C timer, read-only (tw_timer_pending(), expires...). noexcept.
	const tw_timer *native_handle() const noexcept { return &node_; }

protected:
	explicit handle(void (*fire)(tw_timer *), wheel_ctx *c = nullptr) noexcept : ctx_(retain(c))
	{
		tw_timer_init(&node_, fire);
	}
	~handle() { release(ctx_); }

	// Takes @o's wheel and timer; this handle must not be pending.
	void take(handle &o) noexcept
	{
		release(std::exchange(ctx_, std::exchange(o.ctx_, nullptr)));
		twheel_move(ctx_ ? ctx_->w : nullptr, &node_, &o.node_);
	}

	::twheel *live(const char *what) const
	{
		if (!ctx_ || !ctx_->w || !node_.func)
			throw std::logic_error(std::string(what) +
					       (ctx_ && !ctx_->w ? ": the wheel was destroyed" : ": no wheel or callback"));
		return ctx_->w;
	}

	bool arm(tick_t expiry, const char *what)
	{
		const int r = twheel_mod(live(what), &node_, expiry);
		if (r < 0)
			throw_errno(r, what);
		return r == 1;
	}

	template <class Rep, class Period>
	bool arm_after(std::chrono::duration<Rep, Period> d, const char *what)
	{
		const tick_t now = twheel_now(live(what));
		const tick_t n = ticks_ceil(d, ctx_->tick);
		return arm(n > tick_max - now ? tick_max : now + n, what);
	}

	// Disarms; true if it was pending. No-op once the wheel is gone.
	bool del() noexcept { return ctx_ && ctx_->w && twheel_del(ctx_->w, &node_) == 1; }

	static handle *from(tw_timer *n) noexcept
	{
		return reinterpret_cast<handle *>(reinterpret_cast<char *>(n) - offsetof(handle, node_));
	}

	wheel_ctx *ctx_;
	tw_timer node_;

	friend class tw::Wheel;
};

} // namespace detail

/// A timer wheel: owns one C struct twheel and the exception handler of the
/// timers on it. Move-only; timers stay bound and pending across a move.
/// Time is virtual: it moves only when advance() is called; one tick lasts
/// tick_length(), which arm_in() uses to convert std::chrono durations.
class Wheel {
public:
	/// Creates a wheel whose time starts at @start; one tick lasts @tick.
	/// Allocates the C wheel (about 14 KiB) and a control block. Throws
	/// std::invalid_argument if @tick is not positive, std::bad_alloc.
	/// Any thread.
	explicit Wheel(tick_t start = 0, std::chrono::nanoseconds tick = std::chrono::milliseconds(1))
	{
		if (tick.count() <= 0)
			throw std::invalid_argument("tw::Wheel: the tick length must be positive");
		auto c = std::make_unique<detail::wheel_ctx>();
		c->tick = tick;
		c->w = twheel_create(start);
		if (!c->w)
			throw std::bad_alloc();
		ctx_ = c.release();
	}

	/// Moves the wheel; @o is left empty (size() 0, advance() throws
	/// std::logic_error). O(1); noexcept.
	Wheel(Wheel &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
	/// Destroys this wheel as the destructor does, then takes @o's.
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

	/// Cancels every pending Timer (its cancellation callback runs; a timer
	/// re-armed by one is dropped) and TimerHook, without firing any, then
	/// frees the C wheel. Handles outlive it safely (see the top of this
	/// header). O(pending timers); the wheel's thread, not from one of its
	/// callbacks.
	~Wheel() { close(); }

	/// Advances the wheel's time to @now, running in nondecreasing order of
	/// expiry the callback of every timer whose expiry is <= @now, each on
	/// the first advance that reaches it. Returns the number run. Cost:
	/// O(levels) per tick with work plus O(1) per timer fired or cascaded.
	/// Throws std::system_error EINVAL if @now is earlier than now(), EBUSY
	/// from one of this wheel's callbacks; std::logic_error if empty.
	std::size_t advance(tick_t now)
	{
		const long r = twheel_advance(get(), now);
		if (r < 0)
			detail::throw_errno(static_cast<int>(r), "tw::Wheel::advance");
		return static_cast<std::size_t>(r);
	}

	/// std::nullopt when nothing is pending, else twheel_next_expiry(): a
	/// tick no later than the earliest expiry at which advance() has work.
	/// O(levels); noexcept.
	std::optional<tick_t> next_expiry() const noexcept
	{
		if (size() == 0)
			return std::nullopt;
		return twheel_next_expiry(ctx_->w);
	}

	/// The wheel's time (0 if empty). O(1); noexcept.
	tick_t now() const noexcept { return ctx_ ? twheel_now(ctx_->w) : 0; }
	/// Pending timers (0 if empty). O(1); noexcept.
	std::size_t size() const noexcept { return ctx_ ? twheel_count(ctx_->w) : 0; }
	/// The length of a tick (zero if empty). O(1); noexcept.
	std::chrono::nanoseconds tick_length() const noexcept { return ctx_ ? ctx_->tick : std::chrono::nanoseconds{}; }

	/// Sets the handler of exceptions escaping this wheel's callbacks and
	/// cancellation callbacks; an empty one restores the default (print to
	/// stderr). Not from inside the handler. Throws std::logic_error if
	/// empty.
	void on_exception(exception_handler h)
	{
		get();
		ctx_->on_exception = std::move(h);
	}

	/// The C wheel, for calls this class does not wrap (twheel_check(),
	/// twheel_get_stats()); do not destroy it. nullptr if empty.
	::twheel *native_handle() const noexcept { return ctx_ ? ctx_->w : nullptr; }

private:
	::twheel *get() const
	{
		if (!ctx_)
			throw std::logic_error("tw::Wheel used after being moved from");
		return ctx_->w;
	}
	inline void close() noexcept;

	detail::wheel_ctx *ctx_ = nullptr;

	friend class Timer;
	template <class, class>
	friend class TimerHook;
};

/// A timer owning its callback: a move-only handle bound to one wheel for
/// life. The callable is invocable as f() or f(tw::Timer &) (the handle it
/// fired from, e.g. to re-arm itself); its result is ignored. A callable of
/// at most inline_capacity bytes, pointer alignment and a noexcept move
/// constructor is stored in the handle, a larger one in one heap block.
/// sizeof(Timer) is 80 bytes on LP64 (release build).
class Timer : public detail::handle {
public:
	/// Bytes of callable stored without allocating: [this, id], a function
	/// pointer, a std::reference_wrapper...
	static constexpr std::size_t inline_capacity = 16;
	/// True if a callable of type F is stored without allocating.
	template <class F>
	static constexpr bool stores_inline = detail::fn<inline_capacity, Timer &>::template fits<F>;

	/// An empty handle: operator bool false, cancel() a no-op, arming throws.
	Timer() noexcept : handle(nullptr) {}

	/// A timer on @wheel that runs @f when it fires; not armed. O(1);
	/// allocates only if @f does not fit inline. The wheel's thread. Throws
	/// std::invalid_argument if @f is empty (a null function pointer), what
	/// copying @f throws, std::bad_alloc, std::logic_error if @wheel is
	/// empty.
	template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Timer>>>
	Timer(Wheel &wheel, F &&f) : handle(&fire)
	{
		fn_.emplace(std::forward<F>(f));
		if (!fn_)
			throw std::invalid_argument("tw::Timer: empty callable");
		wheel.get();
		ctx_ = detail::retain(wheel.ctx_);
	}

	/// Moves @o here: if @o was pending this handle is, at the same expiry,
	/// and fires once (twheel_move(), O(1)). @o is left empty. Safe inside
	/// any callback, including @o's own. noexcept.
	Timer(Timer &&o) noexcept : handle(&fire) { take(o); }

	/// Cancels this timer (as cancel()), then moves @o here. noexcept.
	Timer &operator=(Timer &&o) noexcept
	{
		if (this != &o) {
			cancel();
			forget();
			take(o);
		}
		return *this;
	}

	/// Cancels the timer (as cancel()) and destroys its callables. O(1);
	/// safe inside any callback, including its own. noexcept.
	~Timer()
	{
		cancel();
		forget();
	}

	/// Arms the timer to fire at tick @expiry whether or not it is pending
	/// (twheel_mod()); an expiry at or before now fires in the next
	/// advance(). Returns true if it was pending. O(1); the wheel's thread,
	/// callbacks included. Throws std::logic_error on an empty handle or
	/// once the wheel is gone.
	bool arm_at(tick_t expiry) { return arm(expiry, "tw::Timer::arm_at"); }

	/// Arms the timer @d after the wheel's time, rounded up to whole ticks
	/// (never early; zero or negative: the next advance; saturates at
	/// tick_max). As arm_at() otherwise.
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		return arm_after(d, "tw::Timer::arm_in");
	}

	/// Disarms the timer. Returns true if it was pending, and then runs the
	/// cancellation callback before returning. Never runs the callback.
	/// O(1); the wheel's thread, callbacks included. noexcept: exceptions
	/// of the cancellation callback go to the wheel's handler.
	bool cancel() noexcept
	{
		if (!del())
			return false;
		cancelled();
		return true;
	}

	/// Sets the cancellation callback g(), run each time the timer stops
	/// being pending without firing: cancel() returning true, destruction
	/// or assignment over a pending timer, destruction of the wheel; never
	/// on expiry or re-arm. nullptr removes it. Allocates a block for it
	/// on the first call (a g above inline_capacity bytes: one more).
	/// Throws as the constructor does, std::logic_error on an empty handle.
	template <class G>
	void on_cancel(G &&g)
	{
		if constexpr (std::is_same_v<std::decay_t<G>, std::nullptr_t>) {
			on_cancel_.reset();
		} else {
			if (!ctx_)
				throw std::logic_error("tw::Timer::on_cancel on an empty timer");
			if (!on_cancel_)
				on_cancel_ = std::make_unique<detail::fn<inline_capacity>>();
			on_cancel_->emplace(std::forward<G>(g));
		}
	}

private:
	void take(Timer &o) noexcept
	{
		handle::take(o);
		fn_ = std::move(o.fn_);
		on_cancel_ = std::move(o.on_cancel_);
		if (ctx_ && ctx_->firing == &o)
			ctx_->firing = this;
	}

	// Lets go of the callables and the wheel (this handle is not pending).
	void forget() noexcept
	{
		if (ctx_ && ctx_->firing == this)
			ctx_->firing = nullptr;
		fn_.reset();
		on_cancel_.reset();
		detail::release(std::exchange(ctx_, nullptr));
	}

	void cancelled() noexcept
	{
		if (on_cancel_ && *on_cancel_)
			detail::guarded(ctx_->on_exception, *on_cancel_);
	}

	// The C callback of every Timer: lend the callable to this frame, call
	// it, then give it back to whichever handle now owns the timer.
	static void fire(tw_timer *n) noexcept
	{
		auto *t = static_cast<Timer *>(from(n));
		detail::wheel_ctx *c = t->ctx_; // kept alive by the advancing Wheel
		detail::fn<inline_capacity, Timer &> f = std::move(t->fn_);
		c->firing = t;
		detail::guarded(c->on_exception, f, *t);
		if (auto *now = static_cast<Timer *>(const_cast<void *>(c->firing))) {
			if (!now->fn_)
				now->fn_ = std::move(f);
			c->firing = nullptr;
		}
	}

	detail::fn<inline_capacity, Timer &> fn_;
	std::unique_ptr<detail::fn<inline_capacity>> on_cancel_;

	friend class Wheel;
};

/// An intrusive timer: derive from TimerHook<Derived> and give Derived a
/// member on_timer() (or on_timer(Tag), so that one object can hold several
/// hooks). No callable is stored: the hook is the C node plus one pointer
/// (48 bytes on LP64), and its C callback calls Derived::on_timer()
/// directly. Arming, cancel(), pending(), expiry(), moves and lifetime are
/// as for Timer; a hook has no cancellation callback. The destructor
/// cancels (after ~Derived: nothing fires in between on the wheel's
/// thread). on_timer() runs with the hook not pending and may re-arm,
/// move or destroy the object (then it must not touch it again).
template <class Derived, class Tag = void>
class TimerHook : public detail::handle {
public:
	/// Binds the hook to @wheel (a hook built without one is bound later
	/// by assigning it a bound hook, e.g. *this = TimerHook(wheel) in
	/// Derived). Throws std::logic_error if @wheel is empty.
	explicit TimerHook(Wheel &wheel) : handle(&fire)
	{
		wheel.get();
		ctx_ = detail::retain(wheel.ctx_);
	}
	/// An unbound hook: operator bool false, arming throws.
	TimerHook() noexcept : handle(&fire) {}
	/// Moves @o's binding and pending state here (twheel_move()). noexcept.
	TimerHook(TimerHook &&o) noexcept : handle(&fire) { take(o); }
	/// Cancels this hook, then takes @o's binding and pending state.
	TimerHook &operator=(TimerHook &&o) noexcept
	{
		if (this != &o) {
			del();
			take(o);
		}
		return *this;
	}
	~TimerHook() { del(); }

	/// As Timer::arm_at().
	bool arm_at(tick_t expiry) { return arm(expiry, "tw::TimerHook::arm_at"); }
	/// As Timer::arm_in().
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		return arm_after(d, "tw::TimerHook::arm_in");
	}
	/// Disarms the hook; true if it was pending. O(1); noexcept.
	bool cancel() noexcept { return del(); }

private:
	static void fire(tw_timer *n) noexcept
	{
		auto *h = static_cast<TimerHook *>(from(n));
		const exception_handler &eh = h->ctx_->on_exception; // the wheel holds it
		try {
			if constexpr (std::is_void_v<Tag>)
				static_cast<Derived *>(h)->on_timer();
			else
				static_cast<Derived *>(h)->on_timer(Tag{});
		} catch (...) {
			detail::report(eh, std::current_exception());
		}
	}
};

inline void Wheel::close() noexcept
{
	if (!ctx_)
		return;
	twheel_drain(
		ctx_->w,
		[](tw_timer *n, void *) {
			if (n->func == &Timer::fire)
				static_cast<Timer *>(detail::handle::from(n))->cancelled();
		},
		nullptr);
	// drop what a cancellation callback re-armed; then no handle reaches the wheel
	twheel_drain(ctx_->w, [](tw_timer *, void *) {}, nullptr);
	twheel_destroy(std::exchange(ctx_->w, nullptr));
	detail::release(std::exchange(ctx_, nullptr));
}

} // namespace tw

#endif // TWHEEL_TWHEEL_HPP
