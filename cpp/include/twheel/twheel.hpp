// SPDX-License-Identifier: MIT
//
// twheel/twheel.hpp - a thin, header-only C++17 layer over the libtwheel
// wheel, in namespace tw, over the public C API only: <twheel/twheel.h>
// states each call's semantics, errors, cost and threads; docs/cpp.md is
// the manual. tw::Wheel owns a struct twheel; tw::Timer is a move-only
// tw_timer with a callable (64 bytes on LP64); tw::TimerHook<Derived> is an
// intrusive one. A moved pending handle stays pending (twheel_move()). A
// Wheel and its handles share a counted control block, so handles outlive
// it safely. No exception crosses a C frame: they go to Wheel::on_exception().
// A callback lends its callable to the running frame, so it may destroy
// its own handle, and a timer callback its Wheel. Handles made in one
// shared object work in another (hidden visibility included): nothing is
// told by the address of an inline function.
#ifndef TWHEEL_TWHEEL_HPP
#define TWHEEL_TWHEEL_HPP

#include <twheel/twheel.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <ratio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace tw {

using tick_t = tw_tick_t;
inline constexpr tick_t tick_max = TW_TICK_MAX;

/// Receives every exception that escapes a callback, on the thread that ran
/// it. Whatever it throws is printed to stderr and dropped.
using exception_handler = std::function<void(std::exception_ptr)>;

/// @d in whole ticks of length @tick, rounded up (never early): 0 for zero,
/// negative and NaN durations, tick_max beyond the range. Exact for every
/// integer duration of any period; floating ones go through long double.
template <class Rep, class Period>
tick_t ticks_ceil(std::chrono::duration<Rep, Period> d, std::chrono::nanoseconds tick) noexcept
{
	static_assert(std::is_arithmetic_v<Rep>, "ticks_ceil() takes an arithmetic duration");
	if (!(d.count() > 0) || tick.count() <= 0)
		return 0;
	using ns = std::ratio_divide<Period, std::nano>; // d in ns is count * num / den
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

namespace detail {

// Calls @f(args...); an exception goes to @h (empty: print it). Never throws.
template <class F, class... A>
void guarded(const exception_handler &h, F &f, A &&...args) noexcept
{
	try {
		try {
			f(std::forward<A>(args)...);
		} catch (...) {
			if (!h)
				throw;
			h(std::current_exception());
		}
	} catch (const std::exception &x) {
		std::fprintf(stderr, "twheel: a callback threw: %s\n", x.what());
	} catch (...) {
		std::fprintf(stderr, "twheel: a callback threw a non-std exception\n");
	}
}

[[noreturn]] inline void throw_errno(int neg, const char *what)
{
	throw std::system_error(-neg, std::generic_category(), what);
}

// The one way this layer stores a callable: a move-only, type-erased
// function of (A...), kept in N bytes inline when it fits (size, alignment
// and a noexcept move), else in one heap block that the N bytes point to.
template <std::size_t N, class... A>
class fn {
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
	struct on_heap {
		std::unique_ptr<F> p;
		void operator()(A... a) { call_f(*p, a...); }
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
	~fn() { reset(); }

	// Stores @f (a null function pointer or an empty std::function gives
	// an empty fn). Throws what copying @f or operator new throws, and then
	// the old callable is still there: it is replaced only once @f is built.
	template <class F>
	void emplace(F &&f)
	{
		using D = std::decay_t<F>;
		static_assert(std::is_invocable_v<D &, A...> || std::is_invocable_v<D &>,
			      "the callable must be invocable with the documented arguments, or none");
		if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D>) {
			if (f == nullptr)
				return reset();
		} else if constexpr (std::is_constructible_v<bool, const D &>) {
			if (!static_cast<bool>(f)) // an empty std::function
				return reset();
		}
		if constexpr (!fits<D>) {
			emplace(on_heap<D>{std::make_unique<D>(std::forward<F>(f))});
		} else {
			fn built; // the old callable goes only once the new one is built
			::new (static_cast<void *>(built.buf_)) D(std::forward<F>(f));
			built.ops_ = &inline_ops<D>::table;
			*this = std::move(built);
		}
	}
	void reset() noexcept
	{
		if (ops_)
			std::exchange(ops_, nullptr)->destroy(buf_);
	}
	// The stored callable if it is an F, else nullptr (std::function::target).
	// It compares addresses of per-type tables, which differ between shared
	// objects built with hidden visibility: use it only for an fn filled in
	// the same shared object, else record what was stored (get_as()).
	template <class F>
	F *target() noexcept
	{
		if constexpr (fits<F>) {
			return ops_ == &inline_ops<F>::table ? inline_ops<F>::get(buf_) : nullptr;
		} else {
			auto *h = target<on_heap<F>>();
			return h ? h->p.get() : nullptr;
		}
	}
	// The stored callable, which the caller knows to be an F (not empty).
	template <class F>
	F *get_as() noexcept
	{
		if constexpr (fits<F>)
			return inline_ops<F>::get(buf_);
		else
			return inline_ops<on_heap<F>>::get(buf_)->p.get();
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

// A callable lent to a running frame (a Timer's callback or cancellation
// callback), and the handle that owns it now: moves of the handle update
// it, destroying the handle (or, for a cancellation callback, replacing it
// with on_cancel()) clears it. Frames nest: a cancellation from a callback.
struct lent_frame {
	const void *owner;
	lent_frame *up;
	bool cancel;
};

// What a Wheel shares with its handles: the C wheel (nullptr once the Wheel
// is gone), the callables lent out, the count of owners, and the C
// callbacks of tw::Timer seen on this wheel. A Timer is told by its C
// callback, and each shared object has its own copy of that inline
// function (with hidden visibility): every copy is recorded here.
struct wheel_ctx {
	::twheel *w = nullptr;
	std::chrono::nanoseconds tick{};
	exception_handler on_exception;
	lent_frame *lent = nullptr;
	std::size_t refs = 1;
	bool advancing = false; // inside Wheel::advance()
	bool closing = false;   // the Wheel was destroyed from a callback
	void (*timer_fn)(tw_timer *) = nullptr;        // the first one seen
	std::vector<void (*)(tw_timer *)> more_timer_fns; // other shared objects'

	// Records @f as a Timer's C callback. Throws std::bad_alloc.
	void note_timer_fn(void (*f)(tw_timer *))
	{
		if (!timer_fn)
			timer_fn = f;
		else if (f != timer_fn && !is_timer_fn(f))
			more_timer_fns.push_back(f);
	}
	bool is_timer_fn(void (*f)(tw_timer *)) const noexcept
	{
		if (f == timer_fn)
			return true;
		for (auto *g : more_timer_fns)
			if (g == f)
				return true;
		return false;
	}
	// The handle @from is now @to (nullptr: gone) for the frames it lent to.
	void relend(const void *from, const void *to, bool cancel_only = false) noexcept
	{
		for (lent_frame *f = lent; f; f = f->up)
			if (f->owner == from && (f->cancel || !cancel_only))
				f->owner = to;
	}
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

// What Timer and TimerHook share: a struct tw_timer and the control block
// of its wheel. Standard-layout, so that the C node leads back to it.
class handle {
public:
	handle(const handle &) = delete;
	handle &operator=(const handle &) = delete;

	/// Bound to a wheel that still exists.
	explicit operator bool() const noexcept { return ctx_ && ctx_->w; }

	/// tw_timer_pending(); false once the wheel is gone.
	bool pending() const noexcept { return ctx_ && ctx_->w && tw_timer_pending(&node_); }

	/// The tick it is armed for, std::nullopt if not pending.
	std::optional<tick_t> expiry() const noexcept
	{
		return pending() ? std::optional<tick_t>(tw_timer_expires(&node_)) : std::nullopt;
	}

	/// twheel_mod(): arms it for tick @expiry, pending or not; true if it
	/// was. Throws std::logic_error on an empty handle or once the wheel is
	/// gone.
	bool arm_at(tick_t expiry)
	{
		const int r = twheel_mod(live("tw::arm_at"), &node_, expiry);
		if (r < 0)
			throw_errno(r, "tw::arm_at");
		return r == 1;
	}

	/// Arms it ticks_ceil(@d) after now() (saturating); as arm_at().
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d)
	{
		const tick_t now = twheel_now(live("tw::arm_in")), n = ticks_ceil(d, ctx_->tick);
		return arm_at(n > tick_max - now ? tick_max : now + n);
	}

	const tw_timer *native_handle() const noexcept { return &node_; }

protected:
	explicit handle(void (*fire)(tw_timer *), wheel_ctx *c = nullptr) noexcept : ctx_(c)
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
		if (!*this)
			throw std::logic_error(std::string(what) +
					       (ctx_ && !ctx_->w ? ": the wheel was destroyed" : ": empty handle"));
		return ctx_->w;
	}

	// Disarms; true if it was pending. No-op once the wheel is gone.
	bool del() noexcept { return ctx_ && ctx_->w && twheel_del(ctx_->w, &node_) == 1; }

	static handle *from(tw_timer *n) noexcept
	{
		return reinterpret_cast<handle *>(reinterpret_cast<char *>(n) - offsetof(handle, node_));
	}

	wheel_ctx *ctx_;
	tw_timer node_{}; // zeroed first: no stale bytes for a debug build to judge

	friend class tw::Wheel;
};

} // namespace detail

/// A timer wheel: owns one C struct twheel and the exception handler of its
/// timers. Move-only; timers stay bound and pending across a move. Time is
/// virtual (it moves in advance()); tick_length() converts durations.
class Wheel {
public:
	/// Throws std::invalid_argument if @tick is not positive, std::bad_alloc.
	explicit Wheel(tick_t start = 0, std::chrono::nanoseconds tick = std::chrono::milliseconds(1))
		: ctx_(new detail::wheel_ctx)
	{
		ctx_->tick = tick;
		ctx_->w = tick.count() > 0 ? twheel_create(start) : nullptr;
		if (!ctx_->w) {
			delete ctx_;
			if (tick.count() <= 0)
				throw std::invalid_argument("tw::Wheel: the tick length must be positive");
			throw std::bad_alloc();
		}
	}

	/// @o is left empty (size() 0, advance() throws std::logic_error).
	Wheel(Wheel &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
	/// Closes this wheel as the destructor does (so not from one of its
	/// callbacks), then takes @o's.
	Wheel &operator=(Wheel &&o) noexcept
	{
		if (this != &o) {
			close();
			ctx_ = std::exchange(o.ctx_, nullptr);
		}
		return *this;
	}

	/// Cancels every pending handle unfired (a Timer's cancellation
	/// callback runs; what it re-arms is dropped). From one of its timer
	/// callbacks (delete of the object that owns it) the wheel is closed so
	/// when the running advance() returns: the timers still due in that
	/// advance run (handles destroyed with the owner have unlinked
	/// themselves), then the others are cancelled. Not from a cancellation
	/// callback that this destructor runs.
	~Wheel() { close(); }

	/// twheel_advance(); throws its error as std::system_error,
	/// std::logic_error if empty. A callback may destroy this Wheel (see
	/// the destructor); the advance then returns as usual.
	std::size_t advance(tick_t now)
	{
		get();
		detail::wheel_ctx *c = detail::retain(ctx_); // outlives this Wheel
		const bool outer = !c->advancing;
		c->advancing = true;
		const long r = twheel_advance(c->w, now);
		if (outer) {
			c->advancing = false;
			if (c->closing)
				shut(c); // destroyed from a callback
		}
		detail::release(c);
		if (r < 0)
			detail::throw_errno(static_cast<int>(r), "tw::Wheel::advance");
		return static_cast<std::size_t>(r);
	}

	/// twheel_next_expiry(), std::nullopt when nothing is pending.
	std::optional<tick_t> next_expiry() const noexcept
	{
		if (size() == 0)
			return std::nullopt;
		return twheel_next_expiry(ctx_->w);
	}

	/// The wheel's time, pending timers, the tick (zeros if empty).
	tick_t now() const noexcept { return ctx_ ? twheel_now(ctx_->w) : 0; }
	std::size_t size() const noexcept { return ctx_ ? twheel_count(ctx_->w) : 0; }
	std::chrono::nanoseconds tick_length() const noexcept { return ctx_ ? ctx_->tick : std::chrono::nanoseconds{}; }

	/// Sets the handler of exceptions escaping callbacks (empty: print them
	/// to stderr). Not from inside the handler. Throws std::logic_error if
	/// empty.
	void on_exception(exception_handler h)
	{
		get();
		ctx_->on_exception = std::move(h);
	}

	/// The C wheel (twheel_check()...), nullptr if empty; do not destroy it.
	::twheel *native_handle() const noexcept { return ctx_ ? ctx_->w : nullptr; }

private:
	::twheel *get() const
	{
		if (!ctx_)
			throw std::logic_error("tw::Wheel used after being moved from");
		return ctx_->w;
	}
	detail::wheel_ctx *share() const
	{
		get();
		return detail::retain(ctx_);
	}
	inline void close() noexcept;
	static inline void shut(detail::wheel_ctx *c) noexcept;

	detail::wheel_ctx *ctx_ = nullptr;

	friend class Timer;
	template <class, class>
	friend class TimerHook;
};

/// A timer owning its callback f() or f(tw::Timer &), bound to one wheel for
/// life. A callable of at most inline_capacity bytes, pointer alignment and
/// a noexcept move is stored in the handle, a larger one in one heap block.
/// While it runs it is lent to the firing frame: the callback may destroy,
/// move or reassign its own handle.
class Timer : public detail::handle {
	using callable = detail::fn<8, Timer &>;
	struct with_cancel;
	// in node_.flags (the owner's): fn_ holds a with_cancel block
	static constexpr std::uint32_t boxed = 1u << 31;

public:
	/// One pointer: [this], [&state], a function pointer, std::ref(x).
	static constexpr std::size_t inline_capacity = 8;
	template <class F>
	static constexpr bool stores_inline = callable::fits<F>;

	/// An empty handle: operator bool false, cancel() a no-op, arming throws.
	Timer() noexcept : handle(&fire) {}

	/// Not armed. Throws std::invalid_argument if @f is a null function
	/// pointer or an empty std::function, what copying @f throws,
	/// std::bad_alloc, std::logic_error if @wheel is empty.
	template <class F>
	Timer(Wheel &wheel, F &&f) : handle(&fire, wheel.share())
	{
		fn_.emplace(std::forward<F>(f));
		if (!fn_)
			throw std::invalid_argument("tw::Timer: empty callable");
		ctx_->note_timer_fn(&fire);
	}

	/// Moves @o here, pending or not, even from @o's callback; @o is empty.
	Timer(Timer &&o) noexcept : handle(&fire) { take(o); }
	/// Moves @o out first (so that the cancellation callback or the old
	/// callable may destroy @o), cancels this timer (as cancel(); what the
	/// cancellation callback re-arms is dropped), then takes what was @o's.
	Timer &operator=(Timer &&o) noexcept
	{
		if (this != &o) {
			Timer from(std::move(o));
			cancel();
			del();
			forget();
			take(from);
		}
		return *this;
	}
	/// Cancels it (as cancel(); what the cancellation callback re-arms is
	/// dropped); safe in any callback, its own included.
	~Timer()
	{
		cancel();
		del();
		forget();
	}

	/// Disarms it; true if it was pending, and then the cancellation
	/// callback has run.
	bool cancel() noexcept
	{
		if (!del())
			return false;
		cancelled();
		return true;
	}

	/// Sets g(), run whenever the timer stops being pending unfired:
	/// cancel() true, destruction of it or its wheel, assignment over it.
	/// nullptr, a null function pointer or an empty std::function removes
	/// it. The first call moves the callable into a heap block beside g (g
	/// over 16 bytes: one more). Strong guarantee: throws what copying @g
	/// throws, std::bad_alloc, and then the old g and callable stay;
	/// std::logic_error on an empty handle. While it runs, g is lent to the
	/// running frame, as the timer callback is: run by cancel() or by the
	/// wheel's destruction, it may destroy, move or re-arm this handle and
	/// call its on_cancel() (the new g is kept; g returns to whichever
	/// handle owns the timer otherwise). Run by this handle's destructor or
	/// an assignment over it, it must not destroy or assign over the handle
	/// (that is destroying it twice), and what it re-arms is dropped.
	template <class G>
	void on_cancel(G &&g)
	{
		if constexpr (std::is_same_v<std::decay_t<G>, std::nullptr_t>) {
			remove_cancel();
		} else {
			if (!ctx_)
				throw std::logic_error("tw::Timer::on_cancel on an empty timer");
			detail::fn<16> ng;
			ng.emplace(std::forward<G>(g)); // may throw: nothing changed yet
			if (!ng)
				return remove_cancel();
			with_cancel *b = box();
			if (!b) {
				callable blk;
				blk.emplace(with_cancel{}); // may throw: nothing changed yet
				b = blk.get_as<with_cancel>();
				b->f = std::move(fn_);
				fn_ = std::move(blk);
				node_.flags |= boxed;
			}
			b->g = std::move(ng);
			ctx_->relend(this, nullptr, true); // a running g is not put back
		}
	}

private:
	// The store once on_cancel() was called: the callable and g. (Never
	// called as a whole: fire() lends f alone.)
	struct with_cancel {
		callable f;
		detail::fn<16> g;
		void operator()(Timer &t) { f(t); }
	};

	// The with_cancel block, if on_cancel() made one. Told by a flag of the
	// node, not by fn::target(): a Timer may be made in one shared object
	// and cancelled in another.
	with_cancel *box() noexcept
	{
		return (node_.flags & boxed) ? fn_.get_as<with_cancel>() : nullptr;
	}

	void remove_cancel() noexcept
	{
		if (with_cancel *b = box())
			b->g.reset();
		if (ctx_)
			ctx_->relend(this, nullptr, true);
	}

	// Runs g, lent to this frame (g may destroy or move this handle).
	void cancelled() noexcept
	{
		with_cancel *b = box();
		if (!b || !b->g)
			return;
		detail::wheel_ctx *c = detail::retain(ctx_);
		detail::fn<16> g = std::move(b->g);
		detail::lent_frame fr{this, c->lent, true};
		c->lent = &fr;
		detail::guarded(c->on_exception, g);
		c->lent = fr.up;
		if (auto *now = static_cast<Timer *>(const_cast<void *>(fr.owner)))
			if (with_cancel *nb = now->box(); nb && !nb->g)
				nb->g = std::move(g);
		detail::release(c);
	}

	// Where the callable is: in fn_, or in fn_'s with_cancel block.
	callable &own() noexcept
	{
		with_cancel *b = box();
		return b ? b->f : fn_;
	}

	void take(Timer &o) noexcept
	{
		handle::take(o); // node_ takes o's flags
		fn_ = std::move(o.fn_);
		o.node_.flags &= ~boxed;
		if (ctx_)
			ctx_->relend(&o, this);
	}

	// Lets go of the callables and the wheel (this handle is not pending).
	void forget() noexcept
	{
		if (ctx_)
			ctx_->relend(this, nullptr);
		fn_.reset();
		node_.flags &= ~boxed;
		detail::release(std::exchange(ctx_, nullptr));
	}

	// The C callback of every Timer: lend the callable to this frame, call
	// it, then give it back to whichever handle now owns the timer.
	static void fire(tw_timer *n) noexcept
	{
		auto *t = static_cast<Timer *>(from(n));
		detail::wheel_ctx *c = t->ctx_; // kept alive by Wheel::advance()
		callable f = std::move(t->own());
		detail::lent_frame fr{t, c->lent, false};
		c->lent = &fr;
		detail::guarded(c->on_exception, f, *t);
		c->lent = fr.up;
		if (auto *now = static_cast<Timer *>(const_cast<void *>(fr.owner)))
			if (callable &slot = now->own(); !slot)
				slot = std::move(f);
	}

	callable fn_;

	friend class Wheel;
};

/// An intrusive timer: Derived gives on_timer() (or on_timer(Tag), for
/// several hooks in one object), called directly by the C callback; it may
/// re-arm, move or destroy the object (then not touch it again). The C node
/// plus one pointer; no cancellation callback. Otherwise as Timer.
template <class Derived, class Tag = void>
class TimerHook : public detail::handle {
public:
	explicit TimerHook(Wheel &wheel) : handle(&fire, wheel.share()) {}
	/// Unbound; bind it by assigning a bound hook.
	TimerHook() noexcept : handle(&fire) {}
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

	bool cancel() noexcept { return del(); }

private:
	static void fire(tw_timer *n) noexcept
	{
		auto *h = static_cast<TimerHook *>(from(n));
		auto call = [d = static_cast<Derived *>(h)] {
			if constexpr (std::is_void_v<Tag>)
				d->on_timer();
			else
				d->on_timer(Tag{});
		};
		detail::guarded(h->ctx_->on_exception, call); // the wheel holds the handler
	}
};

inline void Wheel::close() noexcept
{
	detail::wheel_ctx *c = std::exchange(ctx_, nullptr);
	if (!c)
		return;
	if (c->advancing)
		c->closing = true; // advance() shuts it when it returns
	else
		shut(c);
	detail::release(c);
}

// Cancels the pending handles, then destroys the C wheel: no handle
// reaches it afterwards.
inline void Wheel::shut(detail::wheel_ctx *c) noexcept
{
	twheel_drain(
		c->w,
		[](tw_timer *n, void *arg) {
			if (static_cast<detail::wheel_ctx *>(arg)->is_timer_fn(n->func))
				static_cast<Timer *>(detail::handle::from(n))->cancelled();
		},
		c);
	// drop what a cancellation callback re-armed
	twheel_drain(c->w, [](tw_timer *, void *) {}, nullptr);
	twheel_destroy(std::exchange(c->w, nullptr));
}

} // namespace tw

#endif // TWHEEL_TWHEEL_HPP
