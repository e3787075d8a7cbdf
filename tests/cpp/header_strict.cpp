// SPDX-License-Identifier: MIT
// Every public C++ header, and the C headers they include, in C++ code
// built with the warnings strict C++ projects turn into errors
// (-Wold-style-cast, -Wshadow, -Wconversion, -Wsign-conversion; see
// tests/cpp/meson.build), their templates instantiated by the calls below.
// The kernel timer API and callout(9) headers come before the other C++
// headers: their object-like macros (jiffies, hz, ticks, tick_sbt, as the
// kernels' variables) must not break them. Built twice: without and with
// (-DWITH_ASIO) <twheel/asio.hpp>, which comes first, as those headers'
// manuals ask (Boost has functions named ticks()) and includes the
// others. The compat headers are C headers for C code: their own casts
// are not checked.
#if WITH_ASIO
#include <twheel/asio.hpp>
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wconversion"
#include <twheel/compat/callout.h>
#include <twheel/compat/timer_list.h>
#pragma GCC diagnostic pop

#include <twheel/twheel.hpp>
#if __has_include(<liburing.h>)
#include <twheel/loop.hpp>
#if __cplusplus >= 202002L && __has_include(<coroutine>)
#include <twheel/co.hpp>
#endif
#endif

#include <twheel/host.h>
#include <twheel/list.h>
#include <twheel/rt.h>
#include <twheel/twheel.h>

namespace {

using namespace std::chrono_literals;

template <class O>
struct Hooked : tw::Hook<O, Hooked<O>> {
	explicit Hooked(O &o) : tw::Hook<O, Hooked<O>>(o) {}
	void on_timer() {}
	void on_cancel() {}
};

// The calls a user makes on every owner O.
template <class O>
void use(O &o, typename O::time_point at)
{
	auto t = o.after(10ms, [] {});
	auto p = o.every(1s, [](tw::Timer<O> &self) { (void)self.missed(); }, tw::misfire::all);
	tw::Timer<O> u(o, [] {});
	u.on_cancel([] {});
	(void)u.arm_at(at + 1500us);
	(void)u.arm_in(std::chrono::duration<double>(0.25));
	(void)u.expiry();
	(void)p.period();
	Hooked<O> h(o);
	(void)h.arm_in(2ms);
	(void)h.cancel();
	o.call_after(1ms, [] {});
	(void)t.cancel();
}

} // namespace

int rearm(struct twheel *w, struct tw_timer *t, tw_tick_t e);
int rearm(struct twheel *w, struct tw_timer *t, tw_tick_t e)
{
	return twheel_mod(w, t, e); // the C header's inline re-arm
}

void all_owners();
void all_owners()
{
	tw::Wheel w(1ms);
	use(w, w.now());
	(void)w.advance(w.now() + 5ms);
	(void)w.advance(std::chrono::time_point_cast<std::chrono::milliseconds>(w.now()) + 5ms);
	(void)w.next_expiry();
#if __has_include(<liburing.h>)
	tw::Loop l;
	use(l, l.now());
	(void)l.post([] {});
	(void)l.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); }, [](const io_uring_cqe &cqe) { (void)cqe.res; });
	(void)l.run_once(false);
#if __cplusplus >= 202002L && __has_include(<coroutine>)
	tw::co::spawn(l, [](tw::Loop &loop) -> tw::co::task<void> { co_await tw::co::sleep_for(loop, 1ms); }(l));
#endif
#endif
#if WITH_ASIO
	boost::asio::io_context io;
	tw::AsioHost a(io);
	use(a, a.now());
#endif
}
