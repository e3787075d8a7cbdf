// SPDX-License-Identifier: MIT
//
// tools/bench/probe_hook.cpp - what a tw::Hook<tw::Wheel, D> re-arm pays
// over the C one, step by step: rearm's picks and sizes (common.h: N =
// 10^6 timers pending at now + DELTA, M = 10^7 re-arms of random timers to
// now + DELTA, picked a block of 1,000 at a time, one tick advanced per
// block), five repetitions, ns per re-arm (wall, then the thread's CPU
// time), each block's re-arms in a loop of their own, not inlined (as the
// bench's mod_many()). The forms:
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
// Below owner, on the same hooks:
//   n-load node plus the load of the owner pointer, kept, not tested;
//   n-cmp  node, the owner pointer compared with the block's address held
//          in a register (the least a hook that tests its owner does).
// The r- forms take hook apart on a 48-byte record laid out as a hook (a
// pointer to a block, then the C timer) over a block laid out as the
// owner's (the wheel at 8, the tick at 32), which also holds a counter,
// in one cache line; the wheel is the one the block names:
//   r-via        via on the record;
//   r-hook       r-via plus ++ of the wheel's counter (record, block,
//                wheel: two hops from the record), which is hook;
//   r-store      r-via plus a plain store to that counter (no load);
//   r-load       r-via plus a load of that counter, kept, no store;
//   r-blk        r-via plus ++ of the block's counter (one hop);
//   r-blk-store  r-via plus a plain store to the block's counter;
//   r-self       r-via plus a store to the record itself (an address the
//                pick gives, not the miss);
//   r-global     r-via plus ++ of a counter at a fixed address;
//   r-order      r-hook with the counter loaded first, before the tests
//                and the expiry's store;
//   r-notick     r-hook without the block's tick test;
//   r-split      r-hook with the block at 64n + 32: its wheel and tick in
//                two cache lines, as the real block at 64n + 48 has them
//                (stderr says where the real one is);
//   r-pred       r-hook through a guess: the block last used, in a
//                thread_local, compared with the record's; equal, every
//                load and the counter go through the guess, whose address
//                does not wait on the miss.
// Pin it with taskset.
// usage: probe_hook MODE [REPS] (as above; 5 repetitions by default)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
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

enum mode {
	c, node, owner, via, hook, n_load, n_cmp, r_via, r_hook, r_store, r_load, r_blk, r_blk_store, r_self, r_global,
	r_order, r_notick, r_split, r_pred, n_modes
};

const char *const names[n_modes] = {"c", "node", "owner", "via", "hook", "n-load", "n-cmp", "r-via", "r-hook", "r-store",
				    "r-load", "r-blk", "r-blk-store", "r-self", "r-global", "r-order", "r-notick",
				    "r-split", "r-pred"};

struct blk {
	void *vptr;        // 0, as the control block's
	::twheel *c;       // 8
	uint64_t tick_ns;  // 16
	uint64_t tick_inv; // 24
	uint64_t open_tick; // 32
	uint64_t count;    // 40
};
struct rec {
	blk *b;
	tw_timer n;
};
static_assert(sizeof(rec) == sizeof(Probe), "a record is laid out as a hook");
uint64_t g_count;           // r-global's counter
thread_local blk *t_pred;   // r-pred's guess
const void *g_ctx;          // n-cmp's: the hooks' control block
int reps = 5;
alignas(64) char g_blk[128]; // the r- forms' block: at 0, at 32 for r-split

constexpr bool is_rec(mode m)
{
	return m >= r_via;
}

// One re-arm of @p (or @t, for c) to tick @e; 1 if it was pending.
template <mode M>
long rearm(::twheel *w, tw_timer *t, Probe *p, uint64_t e, const void *xc)
{
	if constexpr (M == c) {
		return twheel_mod(w, t, e);
	} else if constexpr (M == node) {
		return twheel_mod(w, p->node(), e);
	} else if constexpr (M == n_load) {
		const void *x = p->owner();
		asm volatile("" : : "r"(x));
		return twheel_mod(w, p->node(), e);
	} else if constexpr (M == n_cmp) {
		if (p->owner() != xc)
			return -1;
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
	} else if constexpr (M == hook) {
		return p->arm_at(ms_point(std::chrono::milliseconds(e)));
	} else {
		rec *r = reinterpret_cast<rec *>(p);
		blk *x = r->b;
		if constexpr (M == r_pred) {
			blk *k = t_pred;
			if (__builtin_expect(x == k, 1)) {
				asm("" : "+r"(k));
				x = k;
			} else {
				t_pred = x;
			}
		}
		uint64_t early = 0;
		if constexpr (M == r_order) { // x is never null here
			early = static_cast<twheel__head *>(static_cast<void *>(x->c))->mods_fast;
			asm volatile("" ::: "memory");
		}
		if (!x || (M != r_notick && x->open_tick != 1000000) || !x->c)
			return -1;
		auto *h = static_cast<twheel__head *>(static_cast<void *>(x->c));
		tw_timer *n = &r->n;
		if (tw__mod_later(h, n, e)) {
			if constexpr (M == r_order)
				asm volatile("" ::: "memory");
			n->expires = e;
			if constexpr (M == r_hook || M == r_notick || M == r_split || M == r_pred)
				h->mods_fast++;
			else if constexpr (M == r_store)
				h->mods_fast = e;
			else if constexpr (M == r_blk)
				x->count++;
			else if constexpr (M == r_blk_store)
				x->count = e;
			else if constexpr (M == r_load) {
				uint64_t v = h->mods_fast;
				asm volatile("" : : "r"(v));
			} else if constexpr (M == r_self) {
				blk *y = x; // the same pointer, not known to be
				asm("" : "+r"(y));
				r->b = y;
			} else if constexpr (M == r_global)
				g_count++;
			else if constexpr (M == r_order)
				h->mods_fast = early + 1;
			return 1;
		}
		return (twheel_mod)(static_cast<::twheel *>(x->c), n, e);
	}
}

// One block of re-arms, not inlined: its loop keeps its state in registers
// as the bench's mod_many() does.
template <mode M>
__attribute__((noinline)) long many(::twheel *w, void *const *pick, uint32_t k, uint64_t e)
{
	long pend = 0;
	const void *xc = g_ctx;
	for (uint32_t i = 0; i < k; i++)
		pend += rearm<M>(w, static_cast<tw_timer *>(pick[i]), static_cast<Probe *>(pick[i]), e, xc);
	return pend;
}

template <mode M>
int run()
{
	const char *name = names[M];
	const uint32_t n = BENCH_N, m = BENCH_M, block = BENCH_REARM_BLOCK;
	uint64_t now = BENCH_START;
	tw::Wheel wheel(std::chrono::milliseconds(1), ms_point(std::chrono::milliseconds(now)));
	::twheel *w = wheel.native_handle();
	blk *the_blk = new (g_blk + (M == r_split ? 32 : 0)) blk{nullptr, w, 1000000, UINT64_MAX / 1000000, 1000000, 0};
	t_pred = nullptr;
	std::vector<tw_timer> timers(M == c ? n : 0);
	std::unique_ptr<std::aligned_storage_t<sizeof(Probe), alignof(Probe)>[]> mem(
		new std::aligned_storage_t<sizeof(Probe), alignof(Probe)>[M == c ? 0 : n]);
	auto *probes = reinterpret_cast<Probe *>(mem.get());
	auto timer = [&](uint32_t i) -> void * { return M == c ? static_cast<void *>(&timers[i]) : &probes[i]; };

	for (uint32_t i = 0; i < n; i++) {
		if constexpr (M == c) {
			tw_timer_init(&timers[i], [](tw_timer *) {});
			twheel_add(w, &timers[i], now + BENCH_REARM_DELTA);
		} else if constexpr (is_rec(M)) {
			rec *q = reinterpret_cast<rec *>(&probes[i]);
			q->b = the_blk;
			tw_timer_init(&q->n, [](tw_timer *) {});
			twheel_add(w, &q->n, now + BENCH_REARM_DELTA);
		} else {
			new (&probes[i]) Probe(wheel);
			g_ctx = probes[i].owner();
			if (!i)
				std::fprintf(stderr, "%s: the control block at 64n + %u\n", name,
					     static_cast<unsigned>(reinterpret_cast<uintptr_t>(g_ctx) % 64));
			probes[i].arm_at(ms_point(std::chrono::milliseconds(now + BENCH_REARM_DELTA)));
		}
	}
	int rc = 0;
	std::vector<void *> pick(block);
	struct rng r = rng_seed(3);
	for (int rep = 0; rep < reps; rep++) {
		long pend = 0;
		const uint64_t t0 = clock_ns(), c0 = thread_cpu_ns();
		for (uint32_t b = 0; b < m / block; b++) {
			const uint64_t e = now + BENCH_REARM_DELTA;
			for (uint32_t k = 0; k < block; k++)
				pick[k] = timer(rng_below(&r, n));
			pend += many<M>(w, pick.data(), block, e);
			wheel.advance(ms_point(std::chrono::milliseconds(++now)));
		}
		const uint64_t t1 = clock_ns(), c1 = thread_cpu_ns();
		if (pend != static_cast<long>(m / block * block) || wheel.size() != n) {
			std::fprintf(stderr, "probe_hook %s: %ld re-arms found their timer pending, %zu pending, expected %u\n",
				     name, pend, wheel.size(), n);
			rc = 1;
		}
		std::printf("%s %.2f ns/op %.2f cpu\n", name, static_cast<double>(t1 - t0) / (m / block * block),
			    static_cast<double>(c1 - c0) / (m / block * block));
	}
	if constexpr (M != c && !is_rec(M))
		for (uint32_t i = 0; i < n; i++)
			probes[i].~Probe();
	else
		twheel_drain(w, [](tw_timer *, void *) {}, nullptr);
	return rc;
}

template <int M = 0>
int dispatch(const char *a)
{
	if constexpr (M == n_modes) {
		std::fprintf(stderr, "usage: probe_hook MODE, MODE one of:");
		for (const char *x : names)
			std::fprintf(stderr, " %s", x);
		std::fprintf(stderr, "\n");
		return 2;
	} else {
		return std::strcmp(a, names[M]) ? dispatch<M + 1>(a) : run<static_cast<mode>(M)>();
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc > 2 && (reps = std::atoi(argv[2])) < 1)
		return dispatch(""); // the usage
	return dispatch(argc > 1 ? argv[1] : "");
}
