// SPDX-License-Identifier: MIT
//
// tools/bench/ops_cpp.cpp - the C++ layer (<twheel/twheel.hpp>) as a table
// of operations (bench.h), "twheel-cpp": a tw::Wheel and tw::Timer handles
// whose callback is a lambda, armed with arm_at() and disarmed with
// cancel(), so that bench runs every workload over it beside the C API's
// table ("twheel") and the two compare like for like. Built only with the
// C++ layer.
#include <cerrno>
#include <new>
#include <system_error>
#include <vector>

#include <twheel/twheel.hpp>

#include "bench.h"

namespace {

// The wheel and every timer made on it: destroy() ends the timers first.
struct CppWheel {
	tw::Wheel w;
	std::vector<tw::Timer *> timers;
	explicit CppWheel(uint64_t now) : w(now) {}
};

CppWheel *cw(void *w) { return static_cast<CppWheel *>(w); }
tw::Timer *ct(void *t) { return static_cast<tw::Timer *>(t); }
twheel *native(void *w) { return cw(w)->w.native_handle(); }

void *cpp_create(uint64_t now, size_t cap)
{
	CppWheel *w = new (std::nothrow) CppWheel(now);
	if (w)
		w->timers.reserve(cap);
	return w;
}

void cpp_destroy(void *w)
{
	for (tw::Timer *t : cw(w)->timers)
		t->~Timer();
	delete cw(w);
}

void cpp_timer_init(void *w, void *t)
{
	cw(w)->timers.push_back(new (t) tw::Timer(cw(w)->w, [](tw::Timer &self) {
		bench_fired(tw_timer_expires(self.native_handle()));
	}));
}

int cpp_add(void *, void *t, uint64_t e)
{
	if (ct(t)->pending())
		return -EBUSY;
	try {
		ct(t)->arm_at(e);
	} catch (const std::system_error &x) {
		return -x.code().value();
	}
	return 0;
}

int cpp_mod(void *, void *t, uint64_t e)
{
	try {
		return ct(t)->arm_at(e) ? 1 : 0;
	} catch (const std::system_error &x) {
		return -x.code().value();
	}
}

int cpp_del(void *, void *t) { return ct(t)->cancel() ? 1 : 0; }

long cpp_advance(void *w, uint64_t now)
{
	try {
		return static_cast<long>(cw(w)->w.advance(now));
	} catch (const std::system_error &x) {
		return -x.code().value();
	}
}

long cpp_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)
{
	long bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad |= cpp_add(w, tm + i * sizeof(tw::Timer), exp[i]);
	return bad;
}

long cpp_mod_many(void *w, void *const *t, uint32_t n, uint64_t e)
{
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += cpp_mod(w, t[i], e);
	return sum;
}

long cpp_del_many(void *, char *tm, const uint32_t *idx, uint32_t n)
{
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += ct(tm + idx[i] * sizeof(tw::Timer))->cancel();
	return sum;
}

uint64_t cpp_next_expiry(void *w) { return cw(w)->w.next_expiry().value_or(UINT64_MAX); }
size_t cpp_count(void *w) { return cw(w)->w.size(); }
int cpp_check(void *w) { return twheel_check(native(w), nullptr, 0); }

twheel_stats stats(void *w)
{
	twheel_stats st;
	twheel_get_stats(native(w), &st);
	return st;
}
uint64_t cpp_cascaded(void *w) { return stats(w).cascaded; }
uint64_t cpp_mods_fast(void *w) { return stats(w).mods_fast; }

} // namespace

extern "C" const struct bench_ops ops_cpp = {
	"twheel-cpp", sizeof(tw::Timer), 0, cpp_create, cpp_destroy, cpp_timer_init, cpp_add,
	cpp_mod, cpp_del, cpp_advance, cpp_add_many, cpp_mod_many, cpp_del_many, cpp_next_expiry,
	cpp_count, cpp_check, cpp_cascaded, cpp_mods_fast,
};
