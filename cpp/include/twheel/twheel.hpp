// SPDX-License-Identifier: MIT
//
// twheel/twheel.hpp - tw::Wheel, the owner over the C wheel (struct
// twheel; <twheel/twheel.h> states each call's semantics, errors and
// cost). Its timers are tw::Timer<tw::Wheel> and tw::Hook<tw::Wheel, D>
// (<twheel/timer.hpp>). Header-only, C++17, over the public C API only;
// docs/cpp.md is the manual.
#ifndef TWHEEL_TWHEEL_HPP
#define TWHEEL_TWHEEL_HPP

#include <twheel/timer.hpp>
#include <twheel/twheel.h>

namespace tw {

using tick_t = tw_tick_t;
inline constexpr tick_t tick_max = TW_TICK_MAX;

namespace detail {
// What the owners of a struct tw_timer (a wheel, a host) share; ns(): tick
// @t in ns, saturated.
struct wheel_node_ops {
	using node = tw_timer;
	static void init(node *n, void (*fire)(node *)) noexcept { tw_timer_init(n, fire); }
	static bool pending(const ctx *, const node *n) noexcept { return tw_timer_pending(n); }
	static std::uint64_t ns(const ctx *c, tick_t t) noexcept { return t > c->tick_inv ? UINT64_MAX : t * c->tick_ns; }
	static std::uint64_t expiry(const ctx *c, const node *n) noexcept { return ns(c, tw_timer_expires(n)); }
	static std::uint64_t tick(const ctx *c) noexcept { return c->tick_ns; }
};
} // namespace detail

/// A timer wheel with a virtual clock: time starts at the start given and
/// moves only in advance(); a deadline is converted to the wheel's ticks
/// rounding up, the time of advance() and the start rounding down (never
/// early). Move-only; timers stay bound and pending
/// across a move. One thread at a time. Destroyed by the rule of every
/// owner (detail::owner): from a callback, it closes when the running
/// advance() returns.
class Wheel : public detail::owner<Wheel> {
public:
	/// The virtual clock: a time point of a Wheel counts from tick 0.
	struct clock {
		using rep = std::int64_t;
		using period = std::nano;
		using duration = std::chrono::nanoseconds;
		using time_point = std::chrono::time_point<clock>;
		static constexpr bool is_steady = true;
	};
	using duration = clock::duration;
	using time_point = clock::time_point;

	/// A wheel whose tick is @tick, at time @start. Throws tw::error EINVAL
	/// if @tick is not positive or @start before the epoch, std::bad_alloc.
	explicit Wheel(std::chrono::nanoseconds tick = std::chrono::milliseconds(1), time_point start = {})
	{
		if (tick.count() <= 0 || start.time_since_epoch().count() < 0)
			detail::fail(detail::misuse::bad_argument);
		std::unique_ptr<detail::ctx> c(new detail::ctx);
		c->tick_ns = static_cast<std::uint64_t>(tick.count());
		c->tick_inv = UINT64_MAX / (c->open_tick = c->tick_ns);
		if (!(c->c = twheel_create(to_ticks<false>(c.get(), start.time_since_epoch()))))
			throw std::bad_alloc();
		ctx_ = c.release();
	}
	/// Deprecated (removed at 2.0): Wheel(tick, time_point(start * tick)),
	/// the product saturated (at time_point::max()).
	[[deprecated("use Wheel(tick, start time_point)")]] explicit Wheel(
		tick_t start, std::chrono::nanoseconds tick = std::chrono::milliseconds(1))
		: Wheel(tick, detail::ns_tp<time_point>(tick.count() > 0 && start > UINT64_MAX / static_cast<std::uint64_t>(tick.count())
				? UINT64_MAX : start * static_cast<std::uint64_t>(tick.count())))
	{
	}

	/// Runs every timer due up to @now (twheel_advance() to its tick,
	/// rounded down; time_point::max(), where expiry() saturates, to the
	/// last tick); returns how many came due (one skipping late deadlines
	/// counts). Throws tw::error: EINVAL for a time before now() (or NaN),
	/// EBUSY from one of its callbacks. A callback may destroy this Wheel.
	template <class Dur>
	std::size_t advance(std::chrono::time_point<clock, Dur> now)
	{
		const auto d = now.time_since_epoch();
		const bool end = std::is_same_v<Dur, duration> && now == time_point::max();
		const long r = in_run([&](detail::ctx *c) { // before the epoch, or NaN: before now()
			return d.count() >= 0 ? twheel_advance(w(c), end ? tick_max : to_ticks<false>(c, d)) : -EINVAL;
		});
		if (r < 0)
			detail::fail(static_cast<int>(r), r == -EBUSY ? "tw: advance() from a callback" : "tw: advance() before now()");
		return static_cast<std::size_t>(r);
	}
	/// Deprecated (removed at 2.0): advance(time_point(tick * tick_length())).
	/// The product saturates (at time_point::max(), rounded down to a tick).
	[[deprecated("use advance(time_point)")]] std::size_t advance(tick_t tick)
	{
		return advance(detail::ns_tp<time_point>(detail::wheel_node_ops::ns(checked(), tick)));
	}

	/// When the earliest timer fires (twheel_next_expiry()); nullopt if none.
	std::optional<time_point> next_expiry() const noexcept
	{
		const tick_t t = ctx_ ? twheel_next_expiry(w(ctx_)) : tick_max;
		if (t == tick_max && size() == 0)
			return std::nullopt;
		return detail::ns_tp<time_point>(detail::wheel_node_ops::ns(ctx_, t));
	}
	/// The wheel's time; pending timers; the tick (zeros if moved from).
	time_point now() const noexcept
	{
		return detail::ns_tp<time_point>(ctx_ ? detail::wheel_node_ops::ns(ctx_, twheel_now(w(ctx_))) : 0);
	}
	std::size_t size() const noexcept { return ctx_ ? twheel_count(w(ctx_)) : 0; }
	std::chrono::nanoseconds tick() const noexcept { return detail::ns_dur(ctx_ ? ctx_->tick_ns : 0); }
	/// The C wheel (twheel_check()...), nullptr if moved from; do not
	/// destroy it.
	::twheel *native_handle() const noexcept { return ctx_ ? w(ctx_) : nullptr; }

private:
	static ::twheel *w(const detail::ctx *c) noexcept { return static_cast<::twheel *>(c->c); }
	// The wheel of a handle that tested closing, which a gone wheel sets.
	static ::twheel *live(const detail::ctx *c) noexcept { return c->c ? w(c) : (__builtin_unreachable(), nullptr); }
	// @d in ticks, rounded up (the time of advance() and the start: down, so
	// that no timer due after @d runs): none of the arithmetic below if @d
	// is in the tick's unit (a std::chrono::milliseconds on a 1 ms wheel)
	// and the wheel open: open_tick, its tick until it closes, 0 then.
	template <bool Up = true, class Rep, class Period>
	static tick_t to_ticks(const detail::ctx *c, std::chrono::duration<Rep, Period> d) noexcept
	{
		if (open_tick(c, d) && d.count() >= 0)
			return static_cast<tick_t>(d.count());
		if constexpr (!Up)
			return detail::round_ticks<false>(d, std::chrono::nanoseconds(c->tick_ns));
		return to_ticks(c, detail::ns_ceil(d)); // a negative @d is 0
	}
	template <class D> // a duration, or ns (not this path)
	static bool open_tick(const detail::ctx *c, D) noexcept
	{
		if constexpr (!std::is_integral_v<D>) {
			using P = std::ratio_divide<typename D::period, std::nano>;
			return P::den == 1 && std::is_integral_v<typename D::rep> && __builtin_expect(c->open_tick == P::num, 1);
		}
		return false;
	}
	// @ns in ticks, rounded up: one multiplication by the reciprocal and
	// one correction step, never a division.
	static tick_t to_ticks(const detail::ctx *c, std::uint64_t ns) noexcept
	{
		const std::uint64_t d = c->tick_ns;
		if (d == 1)
			return ns;
		__extension__ using u128 = unsigned __int128;
		std::uint64_t q = static_cast<std::uint64_t>((static_cast<u128>(ns) * c->tick_inv) >> 64);
		std::uint64_t r = ns - q * d;
		if (r >= d)
			q++, r -= d;
		return q + (r != 0);
	}
	// Cancels the pending timers, then destroys the C wheel.
	static void finish(detail::ctx *c) noexcept
	{
		twheel_drain(w(c), &detail::drained<tw_timer>, c);
		twheel_drain(w(c), [](tw_timer *, void *) {}, nullptr); // what g re-armed
		twheel_destroy(w(c));
		c->c = nullptr;
	}

	friend class detail::owner<Wheel>;
	friend struct detail::ops<Wheel>;
};

namespace detail {

// The C calls behind Timer<Wheel> and Hook<Wheel, D>.
template <>
struct ops<Wheel> : wheel_node_ops {
	static ctx *share(Wheel &w) { return retain(w.checked()); }
	// @t (ns, or a duration) in the tick of an open wheel, tested first, or not closing.
	template <class T>
	static bool open(const ctx *c, T t) noexcept { return Wheel::open_tick(c, t) || !c->closing; }
	template <class T>
	static int mod_at(ctx *c, node *n, T t) noexcept { return twheel_mod(Wheel::live(c), n, Wheel::to_ticks(c, t)); }
	template <class Rep, class Period>
	static int mod_in(ctx *c, node *n, std::chrono::duration<Rep, Period> d) noexcept
	{
		const tick_t now = twheel_now(Wheel::live(c)), t = Wheel::to_ticks(c, d);
		return twheel_mod(Wheel::live(c), n, t > tick_max - now ? tick_max : now + t);
	}
	// a gone wheel (nullptr) is twheel_del()'s -EINVAL: one test, in C
	static bool del(ctx *c, node *n) noexcept { return twheel_del(Wheel::w(c), n) == 1; }
	// the target of a running advance(): periodic timers count from it
	static std::uint64_t now(const ctx *c) noexcept { return ns(c, twheel_target(Wheel::w(c))); }
	static void move(ctx *c, node *dst, node *src) noexcept { twheel_move(c ? Wheel::w(c) : nullptr, dst, src); }
};

} // namespace detail

/// Deprecated names, removed at 2.0 (docs/cpp.md, "Migrating").
template <class D, class Tag = void>
using TimerHook [[deprecated("use tw::Hook<tw::Wheel, D, Tag>")]] = Hook<Wheel, D, Tag>;

} // namespace tw

#endif // TWHEEL_TWHEEL_HPP
