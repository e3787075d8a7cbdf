// SPDX-License-Identifier: MIT
//
// tools/bench/probe_hook.cpp - what a tw::Hook<tw::Wheel, D> re-arm pays
// over the C one, step by step: rearm's picks and sizes (common.h: N =
// 10^6 timers pending at now + DELTA, M = 10^7 re-arms of random timers to
// now + DELTA, picked a block of 1,000 at a time, one tick advanced per
// block), five repetitions, ns per re-arm, in five forms:
//   c      twheel_mod() on 40-byte C timers, the wheel in a register (the
//          "twheel" table);
//   node   twheel_mod() on the C timer inside each 48-byte hook, the wheel
//          in a register: the hook's size and layout alone;
//   owner  node, plus what arm_at() tests first: the hook's pointer to its
//          owner's block, and the block's tick (read on purpose through a
//          probe class; the wheel stays in a register);
//   via    owner, but the wheel is the one the owner's block names, and the
//          re-arm is twheel.h's inline test and store without its counter
//          (the "re-arms that only stored the expiry" count);
//   hook   Hook::arm_at() (the "twheel-cpp-hook" table): via plus the
//          counter, incremented through the wheel the block names.
// Each step adds loads that wait on the pick's cache miss, or a store to
// an address that does. Pin it with taskset.
// usage: probe_hook c|node|owner|via|hook
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <twheel/twheel.hpp>

extern "C" {
#include "common.h"
}

namespace {

struct Probe : tw::Hook<tw::Wheel, Probe> {
	using Hook::Hook;
	void on_timer() {}
	// What arm_at() reads first: the owner's block (protected in the base).
	const tw::detail::ctx *owner() const noexcept { return c_; }
	tw_timer *node() noexcept { return &n_; }
};

using ms_point = std::chrono::time_point<tw::Wheel::clock, std::chrono::milliseconds>;

enum mode { c, node, owner, via, hook };

// One re-arm of @p (or @t, for c) to tick @e; 1 if it was pending.
template <mode M>
long rearm(::twheel *w, tw_timer *t, Probe *p, uint64_t e)
{
	if constexpr (M == c) {
		return twheel_mod(w, t, e);
	} else if constexpr (M == node) {
		return twheel_mod(w, p->node(), e);
	} else if constexpr (M == owner) {
		const tw::detail::ctx *x = p->owner();
		if (!x || x->open_tick != 1000000)
			return -1;
		return twheel_mod(w, p->node(), e);
	} else if constexpr (M == via) {
		const tw::detail::ctx *x = p->owner();
		if (!x || x->open_tick != 1000000 || !x->c)
			return -1;
		auto *h = static_cast<const twheel__head *>(x->c);
		tw_timer *n = p->node();
		if (tw__mod_later(h, n, e)) {
			n->expires = e;
			return 1;
		}
		return (twheel_mod)(static_cast<::twheel *>(x->c), n, e);
	} else {
		return p->arm_at(ms_point(std::chrono::milliseconds(e)));
	}
}

template <mode M>
int run(const char *name)
{
	const uint32_t n = BENCH_N, m = BENCH_M, block = BENCH_REARM_BLOCK;
	uint64_t now = BENCH_START;
	tw::Wheel wheel(std::chrono::milliseconds(1), ms_point(std::chrono::milliseconds(now)));
	::twheel *w = wheel.native_handle();
	std::vector<tw_timer> timers(M == c ? n : 0);
	std::unique_ptr<std::aligned_storage_t<sizeof(Probe), alignof(Probe)>[]> mem(
		new std::aligned_storage_t<sizeof(Probe), alignof(Probe)>[M == c ? 0 : n]);
	auto *probes = reinterpret_cast<Probe *>(mem.get());
	auto timer = [&](uint32_t i) -> void * { return M == c ? static_cast<void *>(&timers[i]) : &probes[i]; };

	for (uint32_t i = 0; i < n; i++) {
		if constexpr (M == c) {
			tw_timer_init(&timers[i], [](tw_timer *) {});
			twheel_add(w, &timers[i], now + BENCH_REARM_DELTA);
		} else {
			new (&probes[i]) Probe(wheel);
			probes[i].arm_at(ms_point(std::chrono::milliseconds(now + BENCH_REARM_DELTA)));
		}
	}
	int rc = 0;
	std::vector<void *> pick(block);
	struct rng r = rng_seed(3);
	for (int rep = 0; rep < 5; rep++) {
		long pend = 0;
		const uint64_t t0 = clock_ns();
		for (uint32_t b = 0; b < m / block; b++) {
			const uint64_t e = now + BENCH_REARM_DELTA;
			for (uint32_t k = 0; k < block; k++)
				pick[k] = timer(rng_below(&r, n));
			for (uint32_t k = 0; k < block; k++)
				pend += rearm<M>(w, static_cast<tw_timer *>(pick[k]), static_cast<Probe *>(pick[k]), e);
			wheel.advance(ms_point(std::chrono::milliseconds(++now)));
		}
		const uint64_t t1 = clock_ns();
		if (pend != static_cast<long>(m / block * block) || wheel.size() != n) {
			std::fprintf(stderr, "probe_hook %s: %ld re-arms found their timer pending, %zu pending, expected %u\n",
				     name, pend, wheel.size(), n);
			rc = 1;
		}
		std::printf("%s %.2f ns/op\n", name, static_cast<double>(t1 - t0) / (m / block * block));
	}
	if constexpr (M != c)
		for (uint32_t i = 0; i < n; i++)
			probes[i].~Probe();
	else
		twheel_drain(w, [](tw_timer *, void *) {}, nullptr);
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : "";
	if (!std::strcmp(a, "c"))
		return run<c>(a);
	if (!std::strcmp(a, "node"))
		return run<node>(a);
	if (!std::strcmp(a, "owner"))
		return run<owner>(a);
	if (!std::strcmp(a, "via"))
		return run<via>(a);
	if (!std::strcmp(a, "hook"))
		return run<hook>(a);
	std::fprintf(stderr, "usage: probe_hook c|node|owner|via|hook\n");
	return 2;
}
