// SPDX-License-Identifier: MIT
// figures_cpp - print the sizes the documentation states about the C++
// layer, one "name value" line each, for check_figures.py. The inline
// capacities are measured (allocations counted by a replaced operator
// new), not only read from the constants that claim them; not under a
// sanitizer, which owns operator new. The docs quote the release layout:
// a -Ddebug_checks build prints the handles' sizes under other names.
#include <twheel/twheel.hpp>
#ifdef FIGURES_LOOP
#include <twheel/loop.hpp>
#endif

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

static std::size_t allocations;

#ifndef SANITIZED
void *operator new(std::size_t n)
{
	allocations++;
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
#endif

// A callable of N bytes with pointer alignment and a noexcept move.
template <std::size_t N> struct Capture {
	void *words[N / sizeof(void *)];
	void operator()() const noexcept {}
};

// Allocations made by storing an N-byte callable in a Timer.
template <std::size_t N> std::size_t timer_allocs(tw::Wheel &w)
{
	std::size_t before = allocations;
	tw::Timer<> t(w, Capture<N>{});
	return allocations - before;
}

// Allocations made by the first on_cancel() of an N-byte callable.
template <std::size_t N> std::size_t cancel_allocs(tw::Wheel &w)
{
	tw::Timer<> t(w, [] {});
	std::size_t before = allocations;
	t.on_cancel(Capture<N>{});
	return allocations - before;
}

// The largest N in 8, 16, ... 64 for which f<N>() is at most @fits.
template <template <std::size_t> class F, class... A>
std::size_t largest(std::size_t fits, A &...a)
{
	std::size_t n = 0;
	auto try_n = [&](std::size_t N, std::size_t got) {
		if (got <= fits && N == n + 8)
			n = N;
	};
	try_n(8, F<8>{}(a...));
	try_n(16, F<16>{}(a...));
	try_n(24, F<24>{}(a...));
	try_n(32, F<32>{}(a...));
	try_n(40, F<40>{}(a...));
	try_n(48, F<48>{}(a...));
	try_n(56, F<56>{}(a...));
	try_n(64, F<64>{}(a...));
	return n;
}

template <std::size_t N> struct TimerAllocs {
	std::size_t operator()(tw::Wheel &w) const { return timer_allocs<N>(w); }
};
template <std::size_t N> struct CancelAllocs {
	std::size_t operator()(tw::Wheel &w) const { return cancel_allocs<N>(w); }
};

#ifdef FIGURES_LOOP
template <std::size_t N> struct LoopTimerAllocs {
	std::size_t operator()(tw::Loop &l) const
	{
		std::size_t before = allocations;
		tw::Timer<tw::Loop> t(l, Capture<N>{});
		return allocations - before;
	}
};
template <std::size_t N> struct LoopCancelAllocs {
	std::size_t operator()(tw::Loop &l) const
	{
		tw::Timer<tw::Loop> t(l, [] {});
		std::size_t before = allocations;
		t.on_cancel(Capture<N>{});
		return allocations - before;
	}
};
#endif

struct Hooked : tw::Hook<tw::Wheel, Hooked> {
	using Hook::Hook;
	int fired = 0, cancelled = 0;
	void on_timer() noexcept { fired++; }
	void on_cancel() noexcept { cancelled++; }
};

#ifdef FIGURES_LOOP
struct LoopHooked : tw::Hook<tw::Loop, LoopHooked> {
	explicit LoopHooked(tw::Loop &l) : Hook(l) {}
	int fired = 0;
	void on_timer() noexcept { fired++; }
};
#endif

int main()
{
	tw::Wheel w;
	const char *layout = TWHEEL_DEBUG_CHECKS ? "_debug" : "";
	std::printf("Timer%s %zu\nTimerHook%s %zu\n", layout, sizeof(tw::Timer<>), layout,
		    sizeof(tw::Hook<tw::Wheel, Hooked>));
	std::printf("Timer_inline_capacity %zu\n", tw::Timer<>::inline_capacity);
#ifdef FIGURES_LOOP
	std::printf("LoopTimer%s %zu\n", layout, sizeof(tw::Timer<tw::Loop>));
	std::printf("LoopTimer_inline_capacity %zu\n", tw::Timer<tw::Loop>::inline_capacity);
	std::printf("LoopTimerHook%s %zu\n", layout, sizeof(tw::Hook<tw::Loop, LoopHooked>));
#endif
#ifndef SANITIZED
	std::printf("Timer_inline_measured %zu\n", largest<TimerAllocs>(0, w));
	// the first on_cancel() makes one block for the callable and g
	std::printf("Timer_cancel_inline_measured %zu\n", largest<CancelAllocs>(1, w));
	{
		// a hook made, armed, re-armed, fired, cancelled and destroyed
		const std::size_t before = allocations;
		{
			Hooked h(w);
			h.arm_in(std::chrono::seconds(1));
			h.arm_in(std::chrono::seconds(2));
			w.advance(w.now() + std::chrono::seconds(2));
			h.arm_in(std::chrono::seconds(1));
			h.cancel();
		}
		std::printf("TimerHook_allocations %zu\n", allocations - before);
	}
#ifdef FIGURES_LOOP
	tw::loop_options o;
	o.flags = TW_LOOP_NO_URING; // timers only: runs wherever epoll does
	tw::Loop l(o);
	// as on a Wheel: the callable in the handle when it fits
	std::printf("LoopTimer_inline_measured %zu\n", largest<LoopTimerAllocs>(0, l));
	std::printf("LoopTimer_cancel_inline_measured %zu\n", largest<LoopCancelAllocs>(1, l));
	{
		// a hook made, armed, re-armed, cancelled, fired and destroyed
		const std::size_t before = allocations;
		{
			LoopHooked h(l);
			h.arm_in(std::chrono::seconds(1));
			h.arm_in(std::chrono::seconds(2));
			h.cancel();
			h.arm_in(std::chrono::milliseconds(1));
			while (!h.fired)
				l.run_once(true);
		}
		std::printf("LoopTimerHook_allocations %zu\n", allocations - before);
	}
#endif
#endif
	return 0;
}
