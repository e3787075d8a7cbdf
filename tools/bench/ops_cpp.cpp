// SPDX-License-Identifier: MIT
//
// tools/bench/ops_cpp.cpp - the C++ layer (<twheel/twheel.hpp>) as two
// tables of operations (bench.h) beside the C API's ("twheel", whose
// inspection calls check, cascaded and mods_fast are reused on the C
// wheel): "twheel-cpp", tw::Timer<tw::Wheel> handles whose callback is a
// lambda, and "twheel-cpp-hook", tw::Hook<tw::Wheel, D> records. A 1 ms
// wheel, armed with arm_at() at a time point in milliseconds (its tick: no
// conversion) and disarmed with cancel(). Built only with the C++ layer.
#include <cerrno>
#include <new>
#include <vector>

#include <twheel/twheel.hpp>

#include "bench.h"

namespace {

using ms_point = std::chrono::time_point<tw::Wheel::clock, std::chrono::milliseconds>;

ms_point at(uint64_t tick)
{
	return ms_point(std::chrono::milliseconds(static_cast<std::int64_t>(tick)));
}

struct Hooked : tw::Hook<tw::Wheel, Hooked> {
	using Hook::Hook;
	void on_timer() { bench_fired(tw_timer_expires(native_handle())); }
};

// The wheel and every timer made on it: destroy() ends the timers first.
template <class T>
struct CppWheel {
	tw::Wheel w;
	std::vector<T *> timers;
	explicit CppWheel(uint64_t now) : w(std::chrono::milliseconds(1), at(now)) {}
};

template <class T>
struct Ops {
	static CppWheel<T> *cw(void *w) { return static_cast<CppWheel<T> *>(w); }
	static T *ct(void *t) { return static_cast<T *>(t); }
	static void *native(void *w) { return cw(w)->w.native_handle(); }

	static void *create(uint64_t now, size_t cap)
	{
		auto *w = new (std::nothrow) CppWheel<T>(now);
		if (w)
			w->timers.reserve(cap);
		return w;
	}
	static void destroy(void *w)
	{
		for (T *t : cw(w)->timers)
			t->~T();
		delete cw(w);
	}
	static void timer_init(void *w, void *t)
	{
		if constexpr (std::is_same_v<T, Hooked>)
			cw(w)->timers.push_back(new (t) Hooked(cw(w)->w));
		else
			cw(w)->timers.push_back(new (t) T(cw(w)->w, [](T &self) {
				bench_fired(tw_timer_expires(self.native_handle()));
			}));
	}
	static int mod(void *, void *t, uint64_t e)
	{
		try {
			return ct(t)->arm_at(at(e)) ? 1 : 0;
		} catch (const tw::error &x) {
			return -x.code().value();
		}
	}
	// twheel_add(): -EBUSY, untouched, if pending (the model check's add).
	static int add(void *w, void *t, uint64_t e) { return ct(t)->pending() ? -EBUSY : mod(w, t, e); }
	static int del(void *, void *t) { return ct(t)->cancel() ? 1 : 0; }
	static long advance(void *w, uint64_t now)
	{
		try {
			return static_cast<long>(cw(w)->w.advance(at(now)));
		} catch (const tw::error &x) {
			return -x.code().value();
		}
	}
	// Arms new timers as a C++ user does, with arm_at() alone (no add in
	// this API); one found pending is reported as twheel_add()'s -EBUSY.
	static long add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)
	{
		long bad = 0;
		for (uint32_t i = 0; i < n; i++) {
			const int r = mod(w, tm + i * sizeof(T), exp[i]);
			bad |= r == 1 ? -EBUSY : r;
		}
		return bad;
	}
	static long mod_many(void *w, void *const *t, uint32_t n, uint64_t e)
	{
		long sum = 0;
		for (uint32_t i = 0; i < n; i++)
			sum += mod(w, t[i], e);
		return sum;
	}
	static long del_many(void *, char *tm, const uint32_t *idx, uint32_t n)
	{
		long sum = 0;
		for (uint32_t i = 0; i < n; i++)
			sum += ct(tm + idx[i] * sizeof(T))->cancel();
		return sum;
	}
	static uint64_t next_expiry(void *w)
	{
		const auto e = cw(w)->w.next_expiry();
		return e ? static_cast<uint64_t>(e->time_since_epoch() / std::chrono::milliseconds(1)) : UINT64_MAX;
	}
	static size_t count(void *w) { return cw(w)->w.size(); }
	static int check(void *w) { return ops_wheel.check(native(w)); }
	static uint64_t cascaded(void *w) { return ops_wheel.cascaded(native(w)); }
	static uint64_t mods_fast(void *w) { return ops_wheel.mods_fast(native(w)); }

	static constexpr bench_ops table(const char *name)
	{
		return {name, sizeof(T), 0, create, destroy, timer_init, add, mod, del, advance, add_many,
			mod_many, del_many, next_expiry, count, check, cascaded, mods_fast};
	}
};

} // namespace

extern "C" const struct bench_ops ops_cpp = Ops<tw::Timer<tw::Wheel>>::table("twheel-cpp");
extern "C" const struct bench_ops ops_cpp_hook = Ops<Hooked>::table("twheel-cpp-hook");
