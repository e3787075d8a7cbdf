// SPDX-License-Identifier: MIT
//
// twheel/fn.hpp - what every owner and timer of the C++ layer shares:
// tw::error (the one exception type), the callable store detail::fn, and
// detail::ctx, the counted control block an owner (tw::Wheel, tw::Loop,
// tw::AsioHost) shares with its timers, so that a timer outlives its owner
// safely. It includes the standard headers the layer uses. Header-only,
// C++17; docs/cpp.md is the manual.
#ifndef TWHEEL_FN_HPP
#define TWHEEL_FN_HPP

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
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

// [[nodiscard]], with the reason where the language takes one (C++20).
#if __cplusplus >= 202002L
#define TWHEEL_NODISCARD(why) [[nodiscard(why)]]
#else
#define TWHEEL_NODISCARD(why) [[nodiscard]]
#endif

namespace tw {

/// The one exception type of this layer: a std::system_error whose code
/// is an errno value and whose what() names the misuse, one message per
/// kind. "Throws tw::error" in these headers means, besides the errors
/// that call lists: EINVAL for an empty timer, an empty callable, a bad
/// duration or a moved-from owner; ESHUTDOWN for a destroyed owner, a
/// stopped loop or a lost host (an AsioHost's io_context gone); a C call's -errno, with that call's name. Where a call
/// takes a callable it also throws what copying it throws, and
/// std::bad_alloc; each such throw leaves the call without effect.
class error : public std::system_error {
public:
	error(int err, const char *msg) : std::system_error(err, std::generic_category(), msg), msg_(msg) {}
	error(int err, const std::string &msg) : std::system_error(err, std::generic_category(), msg) {}
	const char *what() const noexcept override { return msg_ ? msg_ : std::system_error::what(); }

private:
	const char *msg_ = nullptr; // a static message: what() is it alone
};

/// Receives every exception that escapes a callback, on the thread that ran
/// it, as a copy: it may replace or remove itself. Whatever it throws (or
/// its copy throws) is printed to stderr and dropped.
using exception_handler = std::function<void(std::exception_ptr)>;

/// How a periodic timer catches up after missing deadlines.
enum class misfire { skip, once, all };
/// Where the next deadline counts from: the previous one, or the end of the run.
enum class schedule { fixed_rate, fixed_delay };

namespace detail {

// The kinds of misuse, one message each.
enum class misuse { empty_timer, owner_gone, owner_moved, empty_callable, bad_argument, stopped };

[[noreturn]] inline void fail(misuse m)
{
	static const char *const msg[] = {"tw: the timer is empty",       "tw: the owner was destroyed",
					  "tw: the owner was moved from", "tw: empty callable",
					  "tw: bad duration",             "tw: the event loop is stopped or gone"};
	throw error(m == misuse::owner_gone || m == misuse::stopped ? ESHUTDOWN : EINVAL, msg[static_cast<int>(m)]);
}

// A negative errno of the C API: one of the kinds above, or its own text.
[[noreturn]] inline void fail(int neg, const char *what)
{
	if (neg == -ESHUTDOWN)
		fail(misuse::stopped);
	throw error(-neg, what);
}

// @d in whole ticks of length @tick, rounded up (@Up) or down: as ticks_ceil().
template <bool Up, class Rep, class Period>
std::uint64_t round_ticks(std::chrono::duration<Rep, Period> d, std::chrono::nanoseconds tick) noexcept
{
	static_assert(std::is_floating_point_v<Rep> || (std::is_integral_v<Rep> && sizeof(Rep) <= 8),
		      "takes a duration counted in a floating-point type or an integer of at most 64 bits");
	if (!(d.count() > 0) || tick.count() <= 0)
		return 0;
	using ns = std::ratio_divide<Period, std::nano>; // d in ns is count * num / den
	if constexpr (std::is_floating_point_v<Rep>) {
		const long double t = static_cast<long double>(d.count()) * ns::num / ns::den / tick.count();
		if (!(t < 18446744073709551615.0L))
			return UINT64_MAX;
		const auto w = static_cast<std::uint64_t>(t);
		return Up && static_cast<long double>(w) < t ? w + 1 : w;
	} else {
		__extension__ using u128 = unsigned __int128; // no product overflows
		const u128 p = static_cast<u128>(static_cast<std::uint64_t>(d.count())) * std::uint64_t{ns::num};
		const u128 q = static_cast<u128>(std::uint64_t{ns::den}) * static_cast<std::uint64_t>(tick.count());
		const u128 n = p / q + (Up && p % q != 0);
		return n > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(n);
	}
}
} // namespace detail

/// @d in whole ticks of length @tick, rounded up (never early): 0 for zero,
/// negative and NaN durations, UINT64_MAX beyond. Exact for every integer
/// duration of any period; floating ones (2.5ms, 0.1s: long double) go
/// through long double.
template <class Rep, class Period>
std::uint64_t ticks_ceil(std::chrono::duration<Rep, Period> d, std::chrono::nanoseconds tick) noexcept
{
	return detail::round_ticks<true>(d, tick);
}

namespace detail {

// Durations and time points to and from whole ns, saturated.
template <class Rep, class Period>
std::uint64_t ns_ceil(std::chrono::duration<Rep, Period> d) noexcept
{
	return ticks_ceil(d, std::chrono::nanoseconds(1));
}
inline std::uint64_t ns_ceil(std::uint64_t ns) noexcept { return ns; }
template <class TP>
std::uint64_t tp_ns(TP tp) noexcept
{
	return ns_ceil(tp.time_since_epoch());
}
inline std::chrono::nanoseconds ns_dur(std::uint64_t ns) noexcept
{
	constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
	return std::chrono::nanoseconds(static_cast<std::int64_t>(ns < max ? ns : max));
}
template <class TP>
TP ns_tp(std::uint64_t ns) noexcept
{
	return TP(std::chrono::duration_cast<typename TP::duration>(ns_dur(ns)));
}
inline std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) noexcept
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// guarded()'s handler, out of line (the firing path keeps no registers
// for it): called inside a catch, hands the exception to a copy of @h
// (which the handler may replace) or prints it.
[[gnu::noinline, gnu::cold]] inline void caught(const exception_handler &h) noexcept
{
	try {
		if (!h)
			throw;
		exception_handler{h}(std::current_exception());
	} catch (const std::exception &x) {
		std::fprintf(stderr, "twheel: a callback threw: %s\n", x.what());
	} catch (...) {
		std::fprintf(stderr, "twheel: a callback threw a non-std exception\n");
	}
}
// Calls @f(args...); an exception goes to @h (empty: print it). Never throws.
template <class F, class... A>
void guarded(const exception_handler &h, F &f, A &&...args) noexcept
{
	try {
		f(std::forward<A>(args)...);
	} catch (...) {
		caught(h);
	}
}

// True for what the store takes as empty: a callable that converts to
// false (a null function or member pointer, an empty std::function or
// other wrapper). refuse_empty() throws for it.
template <class D>
bool is_empty_callable(const D &f) noexcept
{
	if constexpr (std::is_constructible_v<bool, const D &>)
		return !static_cast<bool>(f);
	return false;
}
template <class F>
void refuse_empty(const F &f)
{
	if (is_empty_callable<std::decay_t<F>>(f))
		fail(misuse::empty_callable);
}

// The kind_tag of the layer's own callables: nonzero, of this type, so
// that a member of that name in a program's callable is never taken for one.
enum class kind : int {};

// A move-only, type-erased function of (A...), kept in N bytes inline when
// it fits (size, pointer alignment, a noexcept move), else in one heap
// block the N bytes point to. A callable invocable with no arguments
// ignores A. get_as() tells a type by its kind_tag, a number that is the
// same in every shared object, unlike the address of a table.
template <std::size_t N, class... A>
class fn {
	struct ops {
		void (*call)(void *, A...);
		void (*move)(void *dst, void *src) noexcept; // and destroy src
		void (*destroy)(void *) noexcept;
		kind tag;
	};
	template <class F>
	static void call_f(F &f, A... a)
	{
		if constexpr (std::is_invocable_v<F &, A...>)
			f(a...);
		else
			f();
	}
	template <class F, class = void>
	struct tag_of : std::integral_constant<kind, kind{}> {};
	template <class F>
	struct tag_of<F, std::enable_if_t<std::is_same_v<decltype(F::kind_tag), const kind>>>
		: std::integral_constant<kind, F::kind_tag> {};
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
		static constexpr ops table{&call, &move, &destroy, tag_of<F>::value};
	};
	template <class F>
	struct on_heap {
		static constexpr kind kind_tag = tag_of<F>::value;
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

	// Stores @f (empty if @f is an empty callable). Strong guarantee:
	// throws what copying @f or operator new throws, the old one stays.
	template <class F>
	void emplace(F &&f)
	{
		using D = std::decay_t<F>;
		static_assert(std::is_invocable_v<D &, A...> || std::is_invocable_v<D &>,
			      "the callable must be invocable with the documented arguments, or none");
		if (is_empty_callable<D>(f))
			return reset();
		if constexpr (!fits<D>) {
			emplace(on_heap<D>{std::make_unique<D>(std::forward<F>(f))});
		} else {
			fn built;
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
	// The stored callable if its type's kind_tag is @tag (nonzero: an F).
	template <class F>
	F *get_as(kind tag) noexcept
	{
		if (!ops_ || ops_->tag != tag)
			return nullptr;
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

// A callable lent to a running frame (a timer's callback or cancellation
// callback), and the handle that owns it now: moves of the handle update
// it, destroying the handle clears it. Frames nest.
struct lent_frame {
	const void *owner;
	lent_frame *up;
	bool cancel;
};

// What an owner shares with its timers. @c is the C owner (a twheel,
// twheel_loop or twheel_host), nullptr once it is gone. @running counts
// the runs in progress (advance(), run(), a host run): an owner destroyed
// from a callback sets @closing and the outermost run finishes the job.
// @kinds maps the C callback of each C++ timer type seen (one per shared
// object) to what cancels it when the owner goes; room for four is made
// with the owner, so that making a timer allocates nothing.
struct ctx {
	using c_fn = void (*)();
	struct kind {
		c_fn fire;
		void (*cancel)(void *node) noexcept;
	};

	ctx() { kinds.reserve(4); }
	virtual ~ctx() = default;
	void *c = nullptr;
	std::uint64_t tick_ns = 1, tick_inv = 0, open_tick = 0; // a Wheel's: tick, UINT64_MAX / tick, tick until closing
	exception_handler on_exception;
	lent_frame *lent = nullptr;
	std::size_t refs = 1;
	unsigned running = 0;
	bool closing = false;
	std::vector<kind> kinds;

	// What cancels a timer of C callback @fire; nullptr for a C timer.
	template <class N>
	void (*canceller(void (*fire)(N *)) const noexcept)(void *) noexcept
	{
		for (const kind &k : kinds)
			if (k.fire == reinterpret_cast<c_fn>(fire))
				return k.cancel;
		return nullptr;
	}
	template <class N>
	void note(void (*fire)(N *), void (*cancel)(void *) noexcept) // std::bad_alloc
	{
		if (!canceller(fire))
			kinds.push_back({reinterpret_cast<c_fn>(fire), cancel});
	}
	// The handle @from is now @to (nullptr: gone) for the frames it lent to.
	void relend(const void *from, const void *to, bool cancel_only = false) noexcept
	{
		for (lent_frame *f = lent; f; f = f->up)
			if (f->owner == from && (f->cancel || !cancel_only))
				f->owner = to;
	}
};

// An owner's drain callback: cancels a C++ timer as its type does, drops
// any other (a C timer).
template <class N>
void drained(N *n, void *arg) noexcept
{
	if (auto cancel = static_cast<ctx *>(arg)->canceller(n->func))
		cancel(n);
}

template <class C>
C *retain(C *c) noexcept
{
	if (c)
		c->refs++;
	return c;
}
inline void release(ctx *c) noexcept
{
	if (c && --c->refs == 0)
		delete c;
}

// One run of an owner (advance(), run(), a host run) or its close: holds
// the control block, and calls @finish when the outermost run of an owner
// closed meanwhile returns, before uncounting it: a run that a callback of
// @finish starts is refused (EBUSY) and cannot finish it again.
struct run_frame {
	ctx *c;
	void (*finish)(ctx *) noexcept;
	run_frame(ctx *x, void (*f)(ctx *) noexcept) noexcept : c(retain(x)), finish(f) { c->running++; }
	run_frame(const run_frame &) = delete;
	run_frame &operator=(const run_frame &) = delete;
	~run_frame()
	{
		if (c->running == 1 && c->closing && c->c)
			finish(c);
		c->running--;
		release(c);
	}
};

} // namespace detail
} // namespace tw

#endif // TWHEEL_FN_HPP
