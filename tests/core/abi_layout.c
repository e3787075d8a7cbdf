/* SPDX-License-Identifier: MIT */
/*
 * The structs callers allocate, frozen: a program or adapter built against
 * an older header embeds them, so their size and the offsets it was built
 * with must not change. Each is written out here with plain types, as
 * libtwheel 1.0 laid it out (1.2 used two spare bytes of struct
 * twheel_host, 1.3 none: i386 has no other). Compiled, not run: natively,
 * and with -m32 where the i386 headers are installed (tests/core/meson.build).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <twheel/host.h>

struct frozen_tw_timer { /* without -Ddebug_checks */
	uint64_t expires;
	uint32_t idx, flags;
	void *next, *prev;
	void (*func)(void);
};

struct frozen_twheel_host {
	uint64_t tick_ns;
	void *clock, *clock_arg;
	void *w;
	const void *ops;
	uint64_t armed, seen;
	bool in_run, on, spare[2];
	uint64_t st[5];
};

#define SAME(a, fa, b, fb) \
	_Static_assert(offsetof(struct a, fa) == offsetof(struct b, fb), #a "." #fa " moved")

#if !TWHEEL_DEBUG_CHECKS
_Static_assert(sizeof(struct tw_timer) == sizeof(struct frozen_tw_timer), "struct tw_timer resized");
SAME(tw_timer, expires, frozen_tw_timer, expires);
SAME(tw_timer, entry, frozen_tw_timer, next);
SAME(tw_timer, func, frozen_tw_timer, func);
#endif

_Static_assert(sizeof(struct twheel_host) == sizeof(struct frozen_twheel_host),
	       "struct twheel_host resized");
SAME(twheel_host, _rt, frozen_twheel_host, tick_ns);
SAME(twheel_host, _w, frozen_twheel_host, w);
SAME(twheel_host, _ops, frozen_twheel_host, ops);
SAME(twheel_host, _armed, frozen_twheel_host, armed);
SAME(twheel_host, _seen, frozen_twheel_host, seen);
SAME(twheel_host, _st, frozen_twheel_host, st);
_Static_assert(sizeof(struct twheel_host_ops) == 2 * sizeof(void (*)(void)), "struct twheel_host_ops resized");
