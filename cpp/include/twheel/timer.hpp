// SPDX-License-Identifier: MIT
//
// twheel/timer.hpp - the two timer types of the C++ layer, the same on
// every owner O (tw::Wheel, tw::Loop, tw::AsioHost), and detail::owner,
// the base of the owners (moves, close, after/at/every/call_after):
//   tw::Timer<O>          owns its callback f() or f(tw::Timer<O> &);
//   tw::Hook<O, D, Tag>   intrusive: D derives from it, D::on_timer() runs.
// Both embed the owner's C timer and share the owner's control block (they
// outlive it safely), move (a pending one stays pending), never copy, and
// cancel when destroyed. Each owner's header specialises detail::ops<O>.
// All calls O(1), on the owner's thread; "Throws tw::error": fn.hpp.
#ifndef TWHEEL_TIMER_HPP
#define TWHEEL_TIMER_HPP

#include <twheel/fn.hpp>

namespace tw {

class Wheel;

namespace detail {

// The C calls behind the timers of owner O: node (the C timer), share(O &)
// (the ctx, retained), init; open(ctx, t): arming is allowed; mod_at and
// mod_in of t (ns, or a duration since the epoch or from now; 0, 1 or
// -errno); del (false if the owner is gone), pending, expiry, now, tick
// (ns), move.
template <class O>
struct ops;

// What Timer and Hook share: the owner's control block and the C timer,
// in that order: re-arming reads the pointer beside the expiry, so a
// hook in an array straddles two cache lines less often.
template <class O>
class handle {
protected:
	using X = ops<O>;
	using node = typename X::node;

public:
	using time_point = typename O::time_point;

	handle(const handle &) = delete;
	handle &operator=(const handle &) = delete;

	/// Bound to an owner that still exists.
	explicit operator bool() const noexcept { return c_ && c_->c; }
	/// Armed; false once the owner is gone.
	bool pending() const noexcept { return *this && X::pending(c_, &n_); }
	/// When it fires (or fired, or was last armed for); rounded up to the
	/// tick on a Wheel or an AsioHost. An arm_in() not yet placed (Loop,
	/// AsioHost): the earliest, from the owner's last clock reading.
	time_point expiry() const noexcept { return ns_tp<time_point>(c_ ? X::expiry(c_, &n_) : 0); }
	/// Arms it for @tp (any duration on the owner's clock, rounded up; of
	/// another clock, a static_assert says so),
	/// pending or not: true if it was pending. No allocation (on an
	/// AsioHost, but Asio's: docs/cpp.md). Dropped (false) while the owner
	/// is being destroyed. Throws tw::error.
	template <class Clock, class Dur>
	bool arm_at(std::chrono::time_point<Clock, Dur> tp) &
	{
		static_assert(std::is_same_v<Clock, typename time_point::clock>,
			      "tw: arm_at()/at(): a time point of another clock than the owner's (Owner::time_point::clock)");
		return arm<false>(tp.time_since_epoch());
	}
	/// Arms it @d after the owner's now(); as arm_at().
	template <class Rep, class Period>
	bool arm_in(std::chrono::duration<Rep, Period> d) &
	{
		return arm<true>(d);
	}
	/// Not on a temporary: it would be cancelled at the end of the
	/// statement. Keep the timer in a variable, or use call_after().
	template <class... A>
	bool arm_at(A...) && { return temporary<A...>(); }
	template <class... A>
	bool arm_in(A...) && { return temporary<A...>(); }
	/// The C timer, read-only.
	const node *native_handle() const noexcept { return &n_; }

protected:
	handle(ctx *c, void (*fire)(node *)) noexcept : c_(c) { X::init(&n_, fire); }
	~handle() { release(c_); }

	// mod_in (@In) or mod_at of @t, inlined: a wheel's re-arm has an
	// inline path. A gone owner is closing; an open Wheel and @t in its
	// tick are one test (ops<Wheel>::open()).
	template <bool In, class T>
	bool arm(T t)
	{
		if (!c_ || !X::open(c_, t))
			return refused();
		int r;
		if constexpr (In)
			r = X::mod_in(c_, &n_, t);
		else
			r = X::mod_at(c_, &n_, t);
		if (r < 0)
			fail(r, "tw: the owner refused to arm the timer");
		return r == 1;
	}
	template <class... A> // false for every A: arming a temporary fails to compile, saying why
	static bool temporary()
	{
		static_assert(sizeof...(A) == ~std::size_t{0}, "tw: arming a temporary timer, which is cancelled at the end"
			      " of the statement: keep the timer in a variable, or use call_after()");
		return false;
	}
	bool refused() const
	{
		if (!c_)
			fail(misuse::empty_timer);
		if (!c_->c)
			fail(misuse::owner_gone);
		return false; // the owner is being destroyed: dropped
	}
	bool del() noexcept { return c_ && X::del(c_, &n_); } // X::del tests a gone owner
	// Takes @o's owner and timer (pending or not); this one is not pending.
	void take(handle &o) noexcept
	{
		release(std::exchange(c_, std::exchange(o.c_, nullptr)));
		X::move(c_ && c_->c ? c_ : nullptr, &n_, &o.n_);
	}
	static handle *from(node *n) noexcept
	{
		return reinterpret_cast<handle *>(reinterpret_cast<char *>(n) - offsetof(handle, n_));
	}

	ctx *c_;
	node n_{};
};

} // namespace detail

/// A timer owning its callback f() or f(tw::Timer<O> &). A callable of at
/// most inline_capacity bytes, pointer alignment and a noexcept move is
/// stored in the handle, a larger one in one heap block. While it runs it
/// is lent to the firing frame: the callback may destroy, move or assign
/// over its own handle, and destroy the owner.
template <class O = Wheel>
class TWHEEL_NODISCARD("tw: the timer is cancelled when this handle is destroyed: keep it, or use "
			 "call_after()") Timer : public detail::handle<O> {
	using H = detail::handle<O>;
	using X = typename H::X;
	using node = typename H::node;
	using callable = detail::fn<8, Timer &>;

public:
	/// One pointer, on every owner: [this], [&state], a function pointer;
	/// stores_inline<F>: an F is kept in the handle (no allocation).
	static constexpr std::size_t inline_capacity = 8;
	template <class F>
	static constexpr bool stores_inline = callable::template fits<std::decay_t<F>>;

	/// An empty timer: operator bool false, cancel() a no-op, arming throws.
	Timer() noexcept : H(nullptr, &fire) {}
	/// Bound to @owner for life, not armed. Throws tw::error.
	template <class F>
	Timer(O &owner, F &&f) : H(X::share(owner), &fire)
	{
		detail::refuse_empty(f);
		f_.emplace(std::forward<F>(f));
		this->c_->note(&fire, &cancel_node);
	}
	/// Moves @o here, pending or not, even from @o's callback.
	Timer(Timer &&o) noexcept : H(nullptr, &fire) { take(o); }
	/// Moves @o out, cancels this timer (as the destructor), takes @o's.
	Timer &operator=(Timer &&o) noexcept
	{
		if (this != &o) {
			Timer from(std::move(o));
			drop();
			take(from);
		}
		return *this;
	}
	/// Cancels it (as cancel(); what the cancellation callback arms is
	/// dropped). Safe in any callback, its own included.
	~Timer() { drop(); }

	/// Disarms it and ends a periodic timer (from its own callback too);
	/// true if it was pending or periodic, and then the cancellation
	/// callback has run (it may destroy or move this handle).
	bool cancel() noexcept
	{
		box *b = boxed();
		const bool periodic = b && std::exchange(b->period, 0);
		if (!this->del() && !periodic)
			return false;
		cancelled();
		return true;
	}

	/// Arms it every @period (rounded up to whole ns; shorter than the tick:
	/// tw::error EINVAL), first @period from now; fixed_rate on the grid of
	/// deadlines, those passed (missed()) run by @m: skip none, once, all;
	/// fixed_delay from the end of each run. arm_in() or arm_at() then
	/// moves its next run, and the grid counts on from its expiry(). It
	/// ends (as cancel()) where its next deadline would lie past 2^64 ns. The
	/// first call allocates on_cancel()'s block. Otherwise as arm_in().
	template <class Rep, class Period>
	bool arm_every(std::chrono::duration<Rep, Period> period, misfire m = misfire::skip,
		       schedule s = schedule::fixed_rate) &
	{
		const std::uint64_t p = detail::ns_ceil(period);
		if (!this->c_)
			detail::fail(detail::misuse::empty_timer);
		if (!p || (this->c_->c && p < X::tick(this->c_)))
			detail::fail(detail::misuse::bad_argument);
		box *b = make_box();
		const std::uint64_t at = this->c_->c ? detail::add_sat(X::now(this->c_), p) : 0;
		const bool r = this->template arm<false>(at);
		if (!this->c_->closing) // else dropped, as the arm
			b->period = p, b->grid = at, b->armed = X::expiry(this->c_, &this->n_), b->missed = 0,
			b->m = m, b->s = s;
		return r;
	}
	template <class... A>
	bool arm_every(A...) && { return H::template temporary<A...>(); } // as arm_in()
	/// The period, zero for a one-shot timer.
	std::chrono::nanoseconds period() const noexcept { return detail::ns_dur(boxed() ? boxed()->period : 0); }
	/// Inside a periodic callback: how many further deadlines had passed
	/// (UINT32_MAX: that many or more); 0 for a one-shot timer, and under
	/// misfire::skip (a timer late by a period each time never runs).
	std::uint32_t missed() const noexcept
	{
		const std::uint64_t k = boxed() && boxed()->period ? boxed()->missed : 0;
		return static_cast<std::uint32_t>(k < UINT32_MAX ? k : UINT32_MAX);
	}

	/// Sets g(), run whenever the timer stops being pending unfired (cancel()
	/// true, destruction of it or its owner, assignment over it, an AsioHost
	/// undoing an arm that throws); nullptr or an empty callable removes it.
	/// The first call moves the callable into a heap block beside g (g over
	/// 16 bytes: one more). Throws tw::error (strong guarantee). g may
	/// destroy, move or re-arm this handle, except when run by its
	/// destructor or an assignment over it.
	template <class G>
	void on_cancel(G &&g)
	{
		detail::fn<16> ng;
		if constexpr (!std::is_same_v<std::decay_t<G>, std::nullptr_t>) {
			if (!this->c_)
				detail::fail(detail::misuse::empty_timer);
			ng.emplace(std::forward<G>(g));
		}
		if (ng)
			make_box()->g = std::move(ng);
		else if (box *b = boxed())
			b->g.reset();
		if (this->c_)
			this->c_->relend(this, nullptr, true); // a running g is not put back
	}

private:
	// The heap block that on_cancel() and arm_every() make: the callable,
	// g and the period. Told by its kind_tag in every shared object.
	struct box {
		static constexpr detail::kind kind_tag{1};
		callable f;
		detail::fn<16> g;
		std::uint64_t period, grid; // ns; grid: the deadline being served
		std::uint64_t armed;        // expiry() as the grid armed it
		std::uint64_t missed;       // all of them: missed() saturates
		misfire m;
		schedule s;
		void operator()() {} // never called: fire() lends f alone
	};

	box *boxed() const noexcept { return const_cast<callable &>(f_).template get_as<box>(box::kind_tag); }
	box *make_box()
	{
		if (box *b = boxed())
			return b;
		callable blk;
		blk.emplace(box{{}, {}, 0, 0, 0, 0, misfire::skip, schedule::fixed_rate}); // may throw
		box *b = blk.template get_as<box>(box::kind_tag);
		b->f = std::move(f_);
		f_ = std::move(blk);
		return b;
	}
	callable &own() noexcept { return boxed() ? boxed()->f : f_; }
	void take(Timer &o) noexcept
	{
		H::take(o);
		f_ = std::move(o.f_);
		if (this->c_)
			this->c_->relend(&o, this);
	}
	// Cancels, drops a re-arm of g, lets go of the callables and the owner.
	void drop() noexcept
	{
		cancel();
		this->del();
		if (this->c_)
			this->c_->relend(this, nullptr);
		f_.reset();
		detail::release(std::exchange(this->c_, nullptr));
	}

	// Runs g, lent to this frame (g may destroy or move this handle).
	void cancelled() noexcept
	{
		box *b = boxed();
		if (!b || !b->g)
			return;
		detail::ctx *c = detail::retain(this->c_);
		detail::fn<16> g = std::move(b->g);
		detail::lent_frame fr{this, c->lent, true};
		c->lent = &fr;
		detail::guarded(c->on_exception, g);
		c->lent = fr.up;
		if (auto *now = static_cast<Timer *>(const_cast<void *>(fr.owner)))
			if (box *nb = now->boxed(); nb && !nb->g)
				nb->g = std::move(g);
		detail::release(c);
	}
	static void cancel_node(void *n) noexcept
	{
		auto *t = static_cast<Timer *>(H::from(static_cast<node *>(n)));
		if (box *b = t->boxed())
			b->period = 0;
		t->cancelled();
	}

	// Re-arms a periodic timer its callback left unarmed: the next deadline
	// of the grid (after those missed, unless misfire::all), or a period
	// after now; cancels it if its owner is being destroyed or refuses it
	// (a stopped loop), or if that deadline, @n + 1 periods after @g, lies
	// past 2^64 ns: no clock reaches it (saturated, it ran at the clock's
	// last reading again and again).
	void again() noexcept
	{
		box *b = boxed();
		if (!b || !b->period || !*this || this->pending())
			return;
		const std::uint64_t p = b->period, g = b->s == schedule::fixed_delay ? X::now(this->c_) : b->grid;
		const std::uint64_t n = b->m == misfire::all ? 0 : b->missed; // 0 for fixed_delay
		const bool beyond = n >= (UINT64_MAX - g) / p;
		b->grid = beyond ? UINT64_MAX : g + (n + 1) * p;
		if (beyond || this->c_->closing || X::mod_at(this->c_, &this->n_, b->grid) < 0) { // it will not run again
			b->period = 0;
			return cancelled();
		}
		b->armed = X::expiry(this->c_, &this->n_);
	}

	// The C callback of every Timer<O>: lends the callable to this frame,
	// calls it, gives it back to whichever handle now owns the timer.
	static void fire(node *n) noexcept
	{
		auto *t = static_cast<Timer *>(H::from(n));
		detail::ctx *c = t->c_; // kept alive by the owner's running frame
		if (box *b = t->boxed(); b && b->period && b->s == schedule::fixed_rate) {
			if (const std::uint64_t at = X::expiry(c, n); at != b->armed)
				b->grid = at; // arm_in() or arm_at() moved it: the grid counts from there
			// passed: the deadlines whose tick has begun (as in C, the
			// rounding up to the tick never counts as a miss)
			const std::uint64_t tick = X::tick(c), now = X::now(c) / tick * tick;
			const std::uint64_t k = now > b->grid ? (now - b->grid) / b->period : 0;
			b->missed = k;
			if (k && b->m == misfire::skip)
				return t->again(); // the deadlines passed are skipped, this one too
		}
		callable f = std::move(t->own());
		detail::lent_frame fr{t, c->lent, false};
		c->lent = &fr;
		detail::guarded(c->on_exception, f, *t);
		c->lent = fr.up;
		if (auto *now = static_cast<Timer *>(const_cast<void *>(fr.owner))) {
			if (callable &slot = now->own(); !slot)
				slot = std::move(f);
			now->again();
		}
	}

	callable f_;
};

/// tw::Timer t(owner, f) on a class derived from an owner: that owner's timer.
template <class D, class F>
Timer(D &, F &&) -> Timer<typename D::owner_type>;

/// An intrusive timer: D derives from Hook<O, D> (or Hook<O, D, Tag>, for
/// several hooks in one object) and gives on_timer() (on_timer(Tag)); if
/// D also gives on_cancel() (on_cancel(Tag); public, or Hook a friend: a
/// private one is not seen), it runs when cancel(), the owner's
/// destruction or an AsioHost undoing an arm disarms it (not when the hook
/// is destroyed: D is gone by then). The C timer plus one pointer: making,
/// arming, firing and cancelling it allocate nothing (but for the Asio
/// calls of an arm or cancel on an AsioHost: docs/cpp.md). on_timer() may
/// re-arm, move or destroy the object (then not touch it again); a
/// periodic hook re-arms there at a deadline it keeps, arm_at(next +=
/// period) (expiry() is rounded up to the tick: expiry() + period drifts).
template <class O, class D, class Tag = void>
class Hook : public detail::handle<O> {
	using H = detail::handle<O>;
	using X = typename H::X;
	using node = typename H::node;

public:
	/// Bound to @owner, not armed. Throws tw::error; std::bad_alloc once
	/// per owner for the first of a fifth kind of timer with a cancellation
	/// callback (a D with on_cancel(), Timer<O> per shared object): the
	/// owner makes room for four.
	explicit Hook(O &owner) : H(X::share(owner), &fire)
	{
		if constexpr (cancels<D>::value)
			this->c_->note(&fire, &cancel_node);
	}
	/// Unbound; bind it by assigning a bound hook.
	Hook() noexcept : H(nullptr, &fire) {}
	Hook(Hook &&o) noexcept : H(nullptr, &fire) { this->take(o); }
	/// Disarms this hook (no on_cancel()), then takes @o's owner and state.
	Hook &operator=(Hook &&o) noexcept
	{
		if (this != &o) {
			this->del();
			this->take(o);
		}
		return *this;
	}
	~Hook() { this->del(); }

	/// Disarms it: true if it was pending, and then D::on_cancel() has run.
	bool cancel() noexcept
	{
		if (!this->del())
			return false;
		cancel_node(&this->n_);
		return true;
	}

private:
	// D has on_cancel() (or on_cancel(Tag)); T is D, complete by then.
	struct none {};
	using tag = std::conditional_t<std::is_void_v<Tag>, none, Tag>;
	template <class T>
	static auto has_cancel(T *d, none) -> decltype(d->on_cancel(), std::true_type{});
	template <class T, class U>
	static auto has_cancel(T *d, U) -> decltype(d->on_cancel(U{}), std::true_type{});
	static std::false_type has_cancel(...);
	template <class T>
	using cancels = decltype(has_cancel(static_cast<T *>(nullptr), tag{}));

	template <bool Cancel>
	static void call(node *n) noexcept
	{
		auto *h = static_cast<Hook *>(H::from(n));
		auto run = [d = static_cast<D *>(h)] {
			if constexpr (Cancel && std::is_void_v<Tag>)
				d->on_cancel();
			else if constexpr (Cancel)
				d->on_cancel(Tag{});
			else if constexpr (std::is_void_v<Tag>)
				d->on_timer();
			else
				d->on_timer(Tag{});
		};
		if constexpr (Cancel) { // the callback may destroy *h and the owner
			detail::ctx *c = detail::retain(h->c_);
			detail::guarded(c->on_exception, run);
			detail::release(c);
		} else { // the owner's running frame holds its control block
			detail::guarded(h->c_->on_exception, run);
		}
	}
	static void cancel_node(void *n) noexcept
	{
		if constexpr (cancels<D>::value)
			call<true>(static_cast<node *>(n));
	}
	static void fire(node *n) noexcept { call<false>(n); }
};

namespace detail {

// The base of every owner O over its control block C (nullptr once moved
// from): the moves, the close, the exception handler, the timer calls.
// O gives static finish(ctx *) (closes the C owner) and may hide
// stopping(C *), run first even from a callback.
template <class O, class C = ctx>
class owner {
public:
	using owner_type = O;
	owner(const owner &) = delete;
	owner &operator=(const owner &) = delete;
	/// @o is left empty: a call that needs the owner throws tw::error
	/// (EINVAL), a query returns zero, nullptr or empty. Not while it runs.
	owner(owner &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
	/// Takes @o's, then closes the old one as the destructor does (its
	/// cancellation callbacks may destroy this owner).
	owner &operator=(owner &&o) noexcept
	{
		if (this != &o) {
			const owner old(std::move(*this)); // closed last
			ctx_ = std::exchange(o.ctx_, nullptr);
		}
		return *this;
	}

	/// Sets the handler of exceptions escaping its callbacks (a Loop's posts
	/// and I/O handlers too; empty: print them), from it too: each call is
	/// on a copy of it. Throws tw::error.
	void on_exception(exception_handler h) { checked()->on_exception = std::move(h); }

	/// A timer running @f @d from now; throws as Timer() and arm_in().
	template <class Rep, class Period, class F>
	Timer<O> after(std::chrono::duration<Rep, Period> d, F &&f)
	{
		Timer<O> t(self(), std::forward<F>(f));
		t.arm_in(d);
		return t;
	}
	/// A timer running @f at @tp; as after().
	template <class Clock, class Dur, class F>
	Timer<O> at(std::chrono::time_point<Clock, Dur> tp, F &&f)
	{
		Timer<O> t(self(), std::forward<F>(f));
		t.arm_at(tp);
		return t;
	}
	/// A periodic timer (Timer::arm_every()); as after().
	template <class Rep, class Period, class F>
	Timer<O> every(std::chrono::duration<Rep, Period> period, F &&f, misfire m = misfire::skip,
		       schedule s = schedule::fixed_rate)
	{
		Timer<O> t(self(), std::forward<F>(f));
		t.arm_every(period, m, s);
		return t;
	}
	/// Fire and forget: runs @f() @d from now, with no handle; if the owner
	/// is destroyed first, @f is destroyed uncalled. Two allocations (the
	/// timer, its cancellation block), three for an @f over 8 bytes.
	/// Throws as after().
	template <class Rep, class Period, class F>
	void call_after(std::chrono::duration<Rep, Period> d, F &&f)
	{
		refuse_empty(f);
		auto t = std::make_unique<Timer<O>>(self(), [g = std::decay_t<F>(std::forward<F>(f))](Timer<O> &me) mutable {
			const std::unique_ptr<Timer<O>> done(&me);
			g();
		});
		t->on_cancel([p = t.get()] { delete p; });
		t->arm_in(d);
		if (t->pending()) // else dropped: the owner is being destroyed
			t.release();
	}

protected:
	owner() noexcept = default;
	/// Destroying an owner cancels every pending timer unfired (cancellation
	/// callbacks run; what they arm is dropped). From one of its callbacks,
	/// the rule of every owner (docs/cpp.md): arming is dropped from then
	/// on, the timers already due in the running run still run, and the
	/// rest are cancelled when it returns.
	~owner() { close(); }

	C *checked() const
	{
		if (!ctx_)
			fail(misuse::owner_moved);
		return ctx_;
	}
	// @f(C *) as one run of the owner (run_frame): it may be destroyed in it.
	template <class F>
	auto in_run(F &&f)
	{
		const run_frame fr(checked(), &O::finish);
		return f(static_cast<C *>(fr.c));
	}
	// Closes the C owner now, or (from a callback) marks it so that the
	// outermost run closes it when it returns; ctx_ stays set meanwhile.
	void close() noexcept
	{
		if (!ctx_)
			return;
		O::stopping(ctx_);
		ctx_->closing = true, ctx_->open_tick = 0;
		run_frame{ctx_, &O::finish}; // finishes now, or the outermost run will
		release(std::exchange(ctx_, nullptr));
	}
	static void stopping(C *) noexcept {}

	C *ctx_ = nullptr;

private:
	O &self() noexcept { return static_cast<O &>(*this); }
	friend struct ops<O>;
};

} // namespace detail
} // namespace tw

#endif // TWHEEL_TIMER_HPP
