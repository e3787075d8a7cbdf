/* SPDX-License-Identifier: MIT */
/*
 * libtwheel - an exact, tickless, hierarchical cascading timer wheel.
 *
 * Design
 * ======
 * The wheel is the Linux 2.6 "tvec" wheel generalised to 64-bit time, plus
 * one occupancy bitmap per level so that idle ticks are skipped instead of
 * walked.
 *
 * There are TWHEEL_LEVELS = 11 levels: a first level of 256 slots (as 2.6's
 * tv1) and ten levels of 64. Every slot is an intrusive doubly-linked list
 * (struct tw_list) of timers. A timer with expiry e is stored, relative to
 * the next tick to process n = now + 1, at
 *
 *	level k = the smallest k with  e - n < 2^(8 + 6k)
 *	slot    = (e >> shift(k)) & mask(k),  shift(0) = 0, shift(k) = 6k + 2
 *
 * i.e. slots are indexed by bits of the *absolute* expiry, as in 2.6, so a
 * re-arm that stays within the same slot span need not move the timer; nor
 * does a re-arm to a later expiry above level 0 (it moves at its slot's
 * cascade).
 *
 *	level  bits     slots  span of one slot   range (e - n < ...)   at 1 ms/tick
 *	    0   0..7      256  1 tick             256                   256 ms
 *	    1   8..13      64  256                2^14  (16,384)        16 s
 *	    2  14..19      64  2^14               2^20  (1,048,576)     17 min
 *	    3  20..25      64  2^20               2^26                  18.6 h
 *	    4  26..31      64  2^26               2^32                  49.7 days
 *	    5  32..37      64  2^32               2^38                  8.7 years
 *	    6  38..43      64  2^38               2^44                  557 years
 *	    7  44..49      64  2^44               2^50
 *	    8  50..55      64  2^50               2^56
 *	    9  56..61      64  2^56               2^62
 *	   10  62..63       4  2^62               2^64 (all of tw_tick_t)
 *
 * Nothing is capped and nothing fires early: the full 64-bit range is exact.
 * The wide first level keeps short timers (the common case) out of cascades
 * and makes a slot of level k span 2^(6k+2) ticks. An idle timeout
 * re-armed to "now + T" (T over 256 ticks) stays in its slot and costs one
 * store; it moves when that slot's cascade comes, at most once per slot
 * span of elapsed time.
 *
 * Invariants (checked by twheel_check()):
 *   - a level-0 timer in slot s has now < e <= now + 256 and e & 255 == s,
 *     so its slot is processed exactly at tick e;
 *   - a level-k timer (k >= 1) in slot s waits for its slot's cascade tick
 *     C, the first tick after now that is a multiple of the slot span and
 *     has (C >> shift(k)) & 63 == s; now < C <= now + range(k) and C <= e.
 *     When it was placed, C was e with the low shift(k) bits cleared; a
 *     re-arm to a later expiry only stores e (see twheel_mod()), so e may
 *     lie beyond C's span since;
 *   - the bit of a slot in the occupancy bitmap is set iff the slot is
 *     non-empty;
 *   - timers armed at or before the wheel's time (or, during an advance,
 *     at or before its target) wait on the "due" list and run first in the
 *     next advance, sorted by expiry.
 *
 * Cascading: when time reaches a tick C that is a multiple of the level-k
 * span, the level-k slot (C >> shift(k)) & 63 is emptied and each of its
 * timers re-inserted relative to C - 1 by its expiry: one with
 * C <= e < C + span(k) drops to a lower level (those with e == C land in
 * the level-0 slot that is fired at C), one re-armed later since it was
 * placed goes wherever e now belongs. A timer that is not re-armed later
 * therefore moves at most once per level, and every timer is fired from
 * level 0 exactly on its tick.
 *
 * Tickless advance: the next tick with work is the minimum over levels of
 * the next occupied slot's tick (level 0: its expiry; level k: its cascade
 * tick), found with one rotate and one count-trailing-zeros per non-empty
 * level. twheel_advance() jumps from one such tick to the next; cascades
 * that a jump passes over are performed in order because each one is itself
 * such a tick. Skipping 2^32 idle ticks costs the same as skipping one.
 *
 * Parking (twheel_park()): a timer armed before its expiry is known (a
 * delay, placed later from one clock reading for many arms) is pending but
 * on no slot: it waits on the parked list, its expires holding the
 * caller's value. One that was pending on a slot above level 0 is parked
 * in place instead, while there is room in the park table (64 entries,
 * emptied by each placement): it stays linked in its slot, its _idx says
 * "parked" (and which entry, and which slot), and the entry keeps the
 * expiry the slot was chosen by. Placing it (twheel_place()) is then a
 * twheel_mod() from that expiry, which usually only stores the new one: a
 * re-arm by delay touches the timer alone, as a re-arm by deadline. Such a
 * timer is still a slot's timer to the bitmaps and to the slot's cascade,
 * which does not re-insert it but moves it to the parked list. Level-0
 * slots are fired, not cascaded: their timers are parked on the list.
 * twheel_park_hint() parks any other timer (one not pending, say) in place
 * too, given a guess of its expiry whose slot is above level 0: it links
 * it into that slot as if armed at the guess and keeps the guess in the
 * entry, so the placement re-arms it from there by the same rule. That is
 * right whatever the guess: the entry says where the timer waits, and
 * nothing but a cascade of that slot (handled as above) or the placement
 * reads it. A guess at or just before the placed expiry (the host's delay
 * from its last clock reading) makes the placement store the expiry
 * alone.
 *
 * Memory: 256 + 10 * 64 = 896 list heads (16 bytes each), 14 bitmap words
 * and the park table: about 15.3 KiB per wheel, allocated once by
 * twheel_create().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWHEEL__DEFINING_MOD 1 /* twheel_mod() is defined here, not inline */
#include "twheel/twheel.h"
#include "place_rule.h"

#define NLEVELS TWHEEL_LEVELS
#define L0_BITS TWHEEL_LEVEL0_BITS           /* 8 */
#define L0_SIZE (1u << L0_BITS)              /* 256 */
#define L0_MASK (L0_SIZE - 1)
#define LVL_BITS TWHEEL_LEVEL_BITS           /* 6 */
#define LVL_SIZE (1u << LVL_BITS)            /* 64 */
#define LVL_MASK (LVL_SIZE - 1)
#define NSLOTS (L0_SIZE + (NLEVELS - 1) * LVL_SIZE) /* 896 */
#define NWORDS (NSLOTS / 64)                 /* occupancy words: 4 + 10 */

/* Bits of the expiry that index level k, and where its slots start. */
static inline unsigned lvl_shift(unsigned k)
{
	return k ? LVL_BITS * k + (L0_BITS - LVL_BITS) : 0;
}

static inline unsigned lvl_base(unsigned k)
{
	return k ? L0_SIZE + (k - 1) * LVL_SIZE : 0;
}

static inline unsigned idx_level(uint32_t idx)
{
	return idx < L0_SIZE ? 0 : (idx - L0_SIZE) / LVL_SIZE + 1;
}

/* Where a pending timer is linked, beyond the wheel slots 0..NSLOTS-1. */
#define IDX_DUE ((uint32_t)NSLOTS)      /* the due list */
#define IDX_WORK ((uint32_t)NSLOTS + 1) /* the due list's timers while it is fired */
#define IDX_PARKED ((uint32_t)NSLOTS + 2) /* armed, not placed yet (twheel_park()) */
#define IDX_DRAIN ((uint32_t)NSLOTS + 3)  /* waiting to be handed back by twheel_drain() */
#define IDX_NONE TW__IDX_NONE

/*
 * Parked in place, in slot s (a level >= 1 slot) with park table entry i:
 * _idx = IDX_INPLACE | i << 10 | s (above every list index, so twheel.h's
 * inline re-arm calls the library for it).
 */
#define PARK_ENTRIES 64
#define IDX_INPLACE 0x100000u
#define INPLACE_SLOT_BITS 10

static inline bool idx_inplace(uint32_t idx)
{
	return idx - IDX_INPLACE < (uint32_t)PARK_ENTRIES << INPLACE_SLOT_BITS;
}

static inline uint32_t inplace_slot(uint32_t idx)
{
	return idx & ((1u << INPLACE_SLOT_BITS) - 1);
}

static inline uint32_t inplace_entry(uint32_t idx)
{
	return (idx - IDX_INPLACE) >> INPLACE_SLOT_BITS;
}

#define TW_MAGIC 0x74776865u /* "twhe" */

#ifndef EUCLEAN
#define EUCLEAN EINVAL
#endif

/* GCC and Clang (the bit scans below need their builtins anyway) */
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define noinline __attribute__((noinline))
/* the hot entry points start a 64-byte line: their speed then does not
 * depend on where the linker happens to place them */
#define hot_entry __attribute__((aligned(64)))

struct twheel {
	struct twheel__head h; /* first, ABI (twheel.h): h.due_limit, expiries <= it go to the due list */
	tw_tick_t now;       /* the wheel's time: every tick <= now is processed */
	size_t count;        /* pending timers, wherever they are linked */
	tw_tick_t next_event; /* cache of wheel_next(); TW_TICK_MAX when empty */
	uint16_t nonempty;   /* bit k set iff level k has a non-empty slot */
	bool next_valid;     /* next_event is the wheel's next tick with work */
	bool running;        /* inside twheel_advance() */
	uint8_t hosted;      /* debug builds: a host's wheel (twheel__hosted()) */
	bool due_sorted;     /* due list is in nondecreasing expiry order */
	uint32_t work_idx;   /* what the timers on the work list say in _idx */
	tw_tick_t due_last;  /* expiry of the last timer appended to due */
	tw_tick_t due_min;   /* <= every expiry on the due list */
	uint64_t occupied[NWORDS]; /* bit idx set iff slots[idx] is non-empty */
	struct twheel_stats st;
	struct tw_list due;  /* armed at or before due_limit */
	struct tw_list work; /* timers being fired by the current advance */
	struct tw_list parked; /* twheel_park()'s timers not parked in place */
	uint64_t recip;      /* UINT64_MAX / the tick of twheel__park_delay()'s ns (0: none set) */
	uint32_t park_n;     /* park table entries used since it was last empty */
	uint32_t park_live;  /* ...that hold a timer (the others were released) */
	struct {
		struct tw_timer *t; /* parked in place; NULL once released */
		tw_tick_t expires;  /* the expiry its slot was chosen by */
	} park[PARK_ENTRIES];
	struct tw_list slots[NSLOTS];
};

/* ---- misuse reporting (debug builds) ------------------------------------ */

static void default_misuse(const char *what)
{
	fprintf(stderr, "libtwheel: misuse: %s\n", what);
	abort();
}

static twheel_misuse_fn misuse_fn = default_misuse;

/* The layout this library was built with: see TWHEEL__LAYOUT in twheel.h. */
const char TWHEEL__LAYOUT = TWHEEL_DEBUG_CHECKS;

twheel_misuse_fn twheel_set_misuse_handler(twheel_misuse_fn fn)
{
	twheel_misuse_fn old = misuse_fn;
	misuse_fn = fn ? fn : default_misuse;
	return old;
}

#if TWHEEL_DEBUG_CHECKS
#define MISUSE(cond, what) (unlikely(cond) ? (misuse_fn(what), true) : false)

/* Returns true (after reporting) if @t may not be used with @w. */
static bool misused(const struct twheel *w, const struct tw_timer *t)
{
	if (MISUSE(t->_magic != TW_MAGIC, "timer was not initialised with tw_timer_init()"))
		return true;
	if (MISUSE(t->_idx != IDX_NONE && t->_wheel != w, "timer is pending on another wheel"))
		return true;
	return false;
}

/*
 * Returns true (after reporting) if @w is a host's wheel (<twheel/host.h>)
 * and @fn arms on it outside the host's calls and outside a run: the host
 * would not re-arm its loop's timer, and the timer could fire late or
 * never. Inside an advance (the host's run) an arm is seen by the host
 * timer's re-arm that follows.
 */
static bool host_bypassed(const struct twheel *w, const char *what)
{
	return MISUSE(w->hosted == 1 && !w->running, what);
}
#define HOST_BYPASSED(w, fn)                                                                    \
	host_bypassed(w, fn "() on a host's wheel (twheel_host_wheel()): arm through "          \
			 "<twheel/host.h>, or the host's loop timer is not re-armed for it")
#else
#define misused(w, t) false
#define HOST_BYPASSED(w, fn) false
#endif

void twheel__hosted(struct twheel *w, uint8_t state)
{
	if (w) /* a host shut down has none: its arms fail with -EINVAL */
		w->hosted = state;
}

/*
 * Not API: compat.c refuses a legacy timer with no callback before any
 * wheel sees it; a debug build reports one never initialised (all zero:
 * callout_init() forgotten), as the wheel's own calls do.
 */
void twheel__check_initialised(const struct tw_timer *t)
{
#if TWHEEL_DEBUG_CHECKS
	(void)MISUSE(t->_magic != TW_MAGIC, "timer was not initialised with tw_timer_init()");
#else
	(void)t;
#endif
}

/* ---- placement ----------------------------------------------------------- */

static inline unsigned level_of(tw_tick_t delta)
{
	/* delta < 2^8 -> 0; otherwise (floor(log2(delta)) - 2) / 6 */
	if (delta < L0_SIZE)
		return 0;
	return (unsigned)(61 - __builtin_clzll(delta)) / LVL_BITS;
}

/*
 * The slot index a timer expiring at @e belongs in, given the wheel's time.
 * Expiries at or before due_limit go to the due list.
 */
static inline uint32_t wheel_idx(const struct twheel *w, tw_tick_t e)
{
	unsigned lvl = level_of(e - (w->now + 1)); /* e > now */
	if (lvl == 0)
		return (uint32_t)(e & L0_MASK);
	return lvl_base(lvl) + (uint32_t)((e >> lvl_shift(lvl)) & LVL_MASK);
}

static inline uint32_t calc_idx(const struct twheel *w, tw_tick_t e)
{
	return e <= w->h.due_limit ? IDX_DUE : wheel_idx(w, e);
}

static inline void set_bit_idx(struct twheel *w, uint32_t idx)
{
	w->occupied[idx / 64] |= UINT64_C(1) << (idx % 64);
	w->nonempty |= (uint16_t)(1u << idx_level(idx));
}

static inline bool level0_empty(const struct twheel *w)
{
	return !(w->occupied[0] | w->occupied[1] | w->occupied[2] | w->occupied[3]);
}

static inline void clear_bit_idx(struct twheel *w, uint32_t idx)
{
	uint64_t word = w->occupied[idx / 64] &= ~(UINT64_C(1) << (idx % 64));
	w->next_valid = false; /* that slot's tick may have been the next event */
	if (!word && (idx >= L0_SIZE || level0_empty(w)))
		w->nonempty &= (uint16_t)~(1u << idx_level(idx));
}

static inline bool bit_is_set(const struct twheel *w, uint32_t idx)
{
	return (w->occupied[idx / 64] >> (idx % 64)) & 1;
}

/* Link @t (not linked anywhere) with expiry @e at list index @idx. */
static inline void link_timer(struct twheel *w, struct tw_timer *t, tw_tick_t e, uint32_t idx)
{
	t->expires = e;
	t->_idx = idx;
	if (likely(idx < NSLOTS)) {
		tw_list_add(&t->entry, &w->slots[idx]);
		set_bit_idx(w, idx);
		if (w->next_valid) {
			/* the slot's tick with work: e, or its cascade tick */
			tw_tick_t ev = e & ~((UINT64_C(1) << lvl_shift(idx_level(idx))) - 1);
			if (ev < w->next_event)
				w->next_event = ev;
		}
		return;
	}
	/* due list: kept in arrival order; sorted lazily by the next advance */
	if (tw_list_empty(&w->due)) {
		w->due_sorted = true;
		w->due_min = e;
	} else {
		if (e < w->due_last)
			w->due_sorted = false;
		if (e < w->due_min)
			w->due_min = e;
	}
	w->due_last = e;
	tw_list_add_tail(&t->entry, &w->due);
}

/*
 * Take @t, parked in place, out of the park table: it is its slot's timer
 * again, at the expiry its slot was chosen by. Returns its parked value.
 */
static inline uint64_t release_inplace(struct twheel *w, struct tw_timer *t)
{
	uint32_t i = inplace_entry(t->_idx);
	uint64_t value = t->expires;

	t->_idx = inplace_slot(t->_idx);
	t->expires = w->park[i].expires;
	w->park[i].t = NULL;
	if (!--w->park_live)
		w->park_n = 0; /* every entry released: the table is empty again */
	return value;
}

/*
 * Unlink pending @t from whatever list holds it and keep bitmaps right.
 * @t emptied slot @idx iff both its links point at that slot's head; the
 * test reads only @t. (A timer on the list being fired may still carry the
 * index of the slot it came from: its links point at w->work.)
 */
static inline void unlink_timer(struct twheel *w, struct tw_timer *t)
{
	if (unlikely(idx_inplace(t->_idx)))
		release_inplace(w, t);
	uint32_t idx = t->_idx;
	struct tw_list *next = t->entry.next, *prev = t->entry.prev;
	tw_list_del(&t->entry);
	if (unlikely(next == prev) && idx < NSLOTS && next == &w->slots[idx])
		clear_bit_idx(w, idx);
}

static inline void mark_not_pending(struct tw_timer *t)
{
	t->_idx = IDX_NONE;
	t->entry.next = NULL;
	t->entry.prev = NULL;
#if TWHEEL_DEBUG_CHECKS
	t->_wheel = NULL;
#endif
}

/* ---- timers -------------------------------------------------------------- */

#if TWHEEL_DEBUG_CHECKS
/*
 * Whether @t's bytes are those of a pending timer: the magic, an owner,
 * an index that names one of the wheel's lists (a slot, the due, work,
 * parked or drain list, or parked in place in a slot above level 0) and
 * both links set, all pointers aligned. Not the stale bytes of reused
 * memory (an allocator's, the stack's): of a timer that was not pending
 * (its owner NULL, whatever became of the rest), nor of other objects
 * that left a magic at that offset (a timer that lay elsewhere in the
 * block) and nonzero words where the index and the owner are. Reads @t's
 * own bytes only.
 */
static bool looks_pending(const struct tw_timer *t)
{
	const uintptr_t align = _Alignof(struct tw_list) - 1;
	uint32_t idx = t->_idx;

	if (t->_magic != TW_MAGIC || !t->_wheel || !t->entry.next || !t->entry.prev)
		return false;
	if (((uintptr_t)t->_wheel | (uintptr_t)t->entry.next | (uintptr_t)t->entry.prev) & align)
		return false;
	return idx <= IDX_DRAIN ||
	       (idx_inplace(idx) && inplace_slot(idx) >= L0_SIZE && inplace_slot(idx) < NSLOTS);
}
#endif

void tw_timer_init(struct tw_timer *t, void (*func)(struct tw_timer *t))
{
	if (!t)
		return;
#if TWHEEL_DEBUG_CHECKS
	if (MISUSE(looks_pending(t), "tw_timer_init() on a pending timer"))
		return; /* the handler returned: leave the timer (and its wheel) alone */
#endif
	memset(t, 0, sizeof(*t));
	t->_idx = IDX_NONE;
	t->func = func;
#if TWHEEL_DEBUG_CHECKS
	t->_magic = TW_MAGIC;
#endif
}

/*
 * An all-zero timer, never initialised (calloc, "= {0}"), looks pending
 * in slot 0, but a pending timer is always linked. The links are read
 * only for a timer that says slot 0, whose links its unlink reads anyway.
 */
static inline bool unlinked(const struct tw_timer *t)
{
	return unlikely(t->_idx == 0 && !t->entry.next);
}

bool tw_timer_pending(const struct tw_timer *t)
{
	return t && t->_idx != IDX_NONE && !unlinked(t);
}

/* ---- wheel --------------------------------------------------------------- */

struct twheel *twheel_create(tw_tick_t now)
{
	struct twheel *w = malloc(sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	memset(w, 0, sizeof(*w));
	w->now = now;
	w->h.due_limit = now;
	w->work_idx = IDX_WORK;
	w->due_sorted = true;
	tw_list_init(&w->due);
	tw_list_init(&w->work);
	tw_list_init(&w->parked);
	for (size_t i = 0; i < NSLOTS; i++)
		tw_list_init(&w->slots[i]);
	return w;
}

/*
 * Hand every pending timer to @fn after unlinking it. The timers wait on a
 * list of their own, each marked IDX_DRAIN first: @fn may act on one not
 * handed yet (cancel it, re-arm it, park it, move it), which must then find
 * a timer on a plain list, not in a slot or the park table, and take it off
 * that list (it is not handed: no longer pending, or armed again).
 */
static void take_all(struct twheel *w, void (*fn)(struct tw_timer *, void *), void *arg)
{
	struct tw_list all;
	struct tw_list *p;
	/* out of the park table first: @fn may cancel one not handed yet
	 * (the other timer of its object), which then leaves a list only */
	for (uint32_t i = 0; i < w->park_n; i++) {
		struct tw_timer *t = w->park[i].t;

		if (t) {
			t->_idx = inplace_slot(t->_idx); /* it holds its value */
			w->park[i].t = NULL;
		}
	}
	w->park_n = w->park_live = 0;
	tw_list_init(&all);
	tw_list_splice_tail_init(&w->due, &all);
	tw_list_splice_tail_init(&w->work, &all);
	tw_list_splice_tail_init(&w->parked, &all);
	for (unsigned i = 0; i < NWORDS; i++) {
		uint64_t occ = w->occupied[i];
		while (occ) {
			unsigned b = (unsigned)__builtin_ctzll(occ);
			occ &= occ - 1;
			tw_list_splice_tail_init(&w->slots[i * 64 + b], &all);
		}
		w->occupied[i] = 0;
	}
	w->nonempty = 0;
	w->next_valid = false;
	w->due_sorted = true;
	if (fn)
		tw_list_for_each(p, &all)
			tw_list_entry(p, struct tw_timer, entry)->_idx = IDX_DRAIN;
	/* @fn is one of the wheel's callbacks: a destroy there would free
	 * the wheel under this loop, an advance run its timers here */
	const bool was_running = w->running;
	w->running = true;
	while (!tw_list_empty(&all)) {
		struct tw_timer *t = tw_list_entry(all.next, struct tw_timer, entry);
		tw_list_del(&t->entry);
		mark_not_pending(t);
		w->count--;
		if (fn)
			fn(t, arg);
	}
	w->running = was_running;
}

/*
 * Not API: set by compat.c's first bind (always to the same function), so
 * that a thread's legacy binding forgets a wheel destroyed under it; NULL
 * where the compat layer is not linked (tests that build this file alone).
 */
void (*twheel__destroy_hook)(const struct twheel *w);

void twheel_destroy(struct twheel *w)
{
	if (!w)
		return;
#if TWHEEL_DEBUG_CHECKS
	/* the running advance would go on in freed memory: left alone */
	if (MISUSE(w->running, "twheel_destroy() from inside a callback"))
		return;
	if (w->count)
		misuse_fn("twheel_destroy() on a wheel with pending timers (they are unlinked, not fired)");
#endif
	if (unlikely(w->running))
		return; /* from one of its callbacks: the advance runs on @w still */
	void (*hook)(const struct twheel *) = __atomic_load_n(&twheel__destroy_hook, __ATOMIC_RELAXED);
	if (hook)
		hook(w); /* the thread's legacy binding must not reach @w */
	take_all(w, NULL, NULL);
	free(w);
}

void twheel_drain(struct twheel *w, void (*fn)(struct tw_timer *t, void *arg), void *arg)
{
	if (!w || !fn)
		return;
#if TWHEEL_DEBUG_CHECKS
	if (w->running) {
		misuse_fn("twheel_drain() from inside a callback");
		return;
	}
#endif
	take_all(w, fn, arg);
}

/* Link a timer that was not pending and count it. */
static inline void arm_new(struct twheel *w, struct tw_timer *t, tw_tick_t expires, uint32_t idx)
{
	link_timer(w, t, expires, idx);
#if TWHEEL_DEBUG_CHECKS
	t->_wheel = w;
#endif
	w->count++;
	w->st.adds++;
}

hot_entry int twheel_add(struct twheel *w, struct tw_timer *t, tw_tick_t expires)
{
	if (unlikely(!w || !t || !t->func)) {
		/* a debug build reports a timer never initialised first: an
		 * all-zero one has no callback either */
		if (w && t)
			(void)misused(w, t);
		return -EINVAL;
	}
	if (misused(w, t) || HOST_BYPASSED(w, "twheel_add"))
		return -EINVAL;
	if (unlikely(t->_idx != IDX_NONE))
		return unlinked(t) ? -EINVAL : -EBUSY;
	arm_new(w, t, expires, calc_idx(w, expires));
	return 0;
}

/* The expiry bits above a slot's span, by occupancy word (slot index / 64). */
static const uint8_t word_shift[NWORDS] = { 0, 0, 0, 0, 8, 14, 20, 26, 32, 38, 44, 50, 56, 62 };

/*
 * True if pending @t, linked at @old, may stay there re-armed to @expires:
 * its slot is processed no later than @expires (see twheel_mod()).
 */
static inline bool mod_stays(const struct twheel *w, const struct tw_timer *t, uint32_t old,
			     tw_tick_t expires)
{
	return likely(tw__mod_later(&w->h, t, expires)) ||
	       (old < NSLOTS && expires > w->h.due_limit &&
		!((expires ^ t->expires) >> word_shift[old / 64]));
}

/* Everything but the same-slot re-arm; @old is t->_idx. */
static noinline int mod_slow(struct twheel *w, struct tw_timer *t, tw_tick_t expires,
			     uint32_t old)
{
	uint32_t idx = calc_idx(w, expires);
	if (old != IDX_NONE) {
		if (unlinked(t))
			return -EINVAL;
		/*
		 * A due timer re-armed to the same expiry stays. A timer on the
		 * list being fired, or one that a callback re-arms at or before
		 * the advance's target, must move: a timer armed from a callback
		 * fires in a later advance.
		 */
		if (old == IDX_DUE && expires == t->expires) {
			w->h.mods_fast++;
			return 1;
		}
		w->st.mods++;
		unlink_timer(w, t);
		link_timer(w, t, expires, idx);
		return 1;
	}
	if (unlikely(!t->func))
		return -EINVAL;
	arm_new(w, t, expires, idx);
	return 0;
}


/* What twheel.h's inline re-arm takes for granted. */
_Static_assert(offsetof(struct twheel, h) == 0, "struct twheel begins with its ABI head");
_Static_assert(TW__NSLOTS == NSLOTS && IDX_DUE >= TW__NSLOTS && IDX_WORK >= TW__NSLOTS &&
		       IDX_PARKED >= TW__NSLOTS && IDX_DRAIN >= TW__NSLOTS && IDX_DRAIN < IDX_INPLACE,
	       "twheel.h's slot count");
_Static_assert(L0_SIZE == 256 && LVL_SIZE == 64 && L0_BITS == 8 && LVL_BITS == 6,
	       "twheel.h's slot spans");

hot_entry int twheel_mod(struct twheel *w, struct tw_timer *t, tw_tick_t expires)
{
	if (unlikely(!w || !t))
		return -EINVAL;
	if (misused(w, t) || HOST_BYPASSED(w, "twheel_mod"))
		return -EINVAL;
	/*
	 * The re-arm of a pending timer is the hot path (idle timeouts). The
	 * timer stays where it is, and only the expiry is stored, when its
	 * slot is processed no later than the new expiry (the second case,
	 * tested first, is twheel.h's tw__mod_later(), which callers run
	 * inline):
	 *   - the new expiry lies in the same slot span as the stored one (the
	 *     same tick on level 0);
	 *   - or the timer is on a level >= 1 and the new expiry is later: the
	 *     slot's cascade (at or before the stored expiry) re-inserts it by
	 *     its expiry, wherever that now belongs ("re-armed later, moved
	 *     when its slot comes up", as Go's runtime timers did). Level-0
	 *     slots are fired, not cascaded, so their timers always move.
	 * This reads the first 16 bytes of the timer (one cache line) and a
	 * dozen instructions, so that independent re-arms overlap in memory;
	 * an idle timeout pushed back on every request never touches another
	 * timer. The exception: from a callback, a re-arm at or before the
	 * advance's target must wait for a later advance (mod_slow moves it).
	 */
	uint32_t old = t->_idx;
	if (mod_stays(w, t, old, expires)) {
		t->expires = expires;
		w->h.mods_fast++;
		return 1;
	}
	return mod_slow(w, t, expires, old);
}

/* The same function under the name twheel.h's inline re-arm calls. */
extern __typeof__(twheel_mod) twheel__mod __attribute__((alias("twheel_mod")));

hot_entry int twheel_del(struct twheel *w, struct tw_timer *t)
{
	if (unlikely(!w || !t))
		return -EINVAL;
#if TWHEEL_DEBUG_CHECKS
	if (misused(w, t))
		return -EINVAL;
#endif
	if (t->_idx == IDX_NONE)
		return 0;
	if (unlinked(t))
		return -EINVAL;
	if (unlikely(idx_inplace(t->_idx))) {
		/* parked in place: it keeps its value, as one parked on the
		 * list, drained or unparked does */
		uint64_t value = t->expires;

		unlink_timer(w, t);
		t->expires = value;
	} else {
		unlink_timer(w, t);
	}
	mark_not_pending(t);
	w->count--;
	w->st.dels++;
	return 1;
}

/* ---- parking: armed now, placed later ------------------------------------ */

/*
 * A parked timer is pending (counted, cancellable, re-armable) but is not
 * placed by expiry: its expires holds the caller's value until
 * twheel_place() arms it for real (or twheel_unpark() hands it back). One
 * pending on a slot above level 0 is parked in place while the park table
 * has room (the design comment at the top); any other waits on the parked
 * list. The statistics count the placement as an arm, not the parking.
 */
/*
 * Take @t off its list if it @was pending, else make it @w's and count it.
 * -EINVAL, nothing changed, for an all-zero @t (unlinked(): it says slot
 * 0, which parks it here, never in place).
 */
static inline int park_take(struct twheel *w, struct tw_timer *t, int was)
{
	if (was) {
		if (unlinked(t))
			return -EINVAL;
		unlink_timer(w, t);
	} else {
#if TWHEEL_DEBUG_CHECKS
		t->_wheel = w;
#endif
		w->count++;
	}
	return 0;
}

static inline int park(struct twheel *w, struct tw_timer *t, uint64_t value, tw_tick_t hint)
{
	uint32_t idx, i;
	int was;

	if (unlikely(!w || !t))
		return -EINVAL;
	if (misused(w, t))
		return -EINVAL;
	/* a pending timer has a callback (it was armed): its first 16 bytes,
	 * one cache line, are all that parking it in place reads (an all-zero
	 * one is refused by park_take()) */
	idx = t->_idx;
	if (unlikely(idx == IDX_NONE && !t->func))
		return -EINVAL;
	if (idx_inplace(idx)) { /* parked in place already: a new value */
		t->expires = value;
		return 1;
	}
	was = idx != IDX_NONE;
	if (likely(w->park_n < PARK_ENTRIES)) {
		if (idx - L0_SIZE < NSLOTS - L0_SIZE) {
			/* in the slot it waits in: the entry keeps its expiry */
			hint = t->expires;
		} else {
			/*
			 * Not on a far slot: linked at once in the slot @hint
			 * belongs in, if that is above level 0, as if armed at
			 * @hint. Any hint is right: the placement re-arms it
			 * from there by twheel_mod()'s rule.
			 */
			if (hint <= w->h.due_limit)
				goto list;
			idx = wheel_idx(w, hint);
			if (idx < L0_SIZE)
				goto list;
			if (park_take(w, t, was))
				return -EINVAL;
			link_timer(w, t, hint, idx);
		}
		i = w->park_n++;
		w->park_live++;
		w->park[i].t = t;
		w->park[i].expires = hint;
		t->_idx = IDX_INPLACE | i << INPLACE_SLOT_BITS | idx;
		t->expires = value;
		return was;
	}
list:
	if (park_take(w, t, was))
		return -EINVAL;
	t->expires = value;
	t->_idx = IDX_PARKED;
	tw_list_add_tail(&t->entry, &w->parked);
	return was;
}

int twheel_park(struct twheel *w, struct tw_timer *t, uint64_t value)
{
	if (w && HOST_BYPASSED(w, "twheel_park"))
		return -EINVAL;
	return park(w, t, value, 0); /* 0 is at or before due_limit: no hint */
}

/* twheel_park_hint() but for its common case: out of line, so that the
 * common case does not carry park()'s frame. */
static noinline int park_other(struct twheel *w, struct tw_timer *t, uint64_t value, tw_tick_t hint)
{
	return park(w, t, value, hint);
}

static inline __attribute__((always_inline)) int park_hint(struct twheel *w, struct tw_timer *t,
							  uint64_t value, tw_tick_t hint)
{
	/* the common case first: a timer not pending, hinted above level 0 */
	if (likely(w && t && t->_idx == IDX_NONE && t->func && w->park_n < PARK_ENTRIES &&
		   hint > w->h.due_limit && hint - (w->now + 1) >= L0_SIZE)) {
		unsigned lvl = level_of(hint - (w->now + 1)), shift = lvl_shift(lvl);
		uint32_t slot = (uint32_t)((hint >> shift) & LVL_MASK), idx = lvl_base(lvl) + slot;
		uint32_t i;

		if (misused(w, t))
			return -EINVAL;
		i = w->park_n++;
		w->park_live++;
		w->park[i].t = t;
		w->park[i].expires = hint;
		t->_idx = IDX_INPLACE | i << INPLACE_SLOT_BITS | idx;
		t->expires = value;
#if TWHEEL_DEBUG_CHECKS
		t->_wheel = w;
#endif
		w->count++;
		/* link_timer(), the level known */
		tw_list_add(&t->entry, &w->slots[idx]);
		w->occupied[idx / 64] |= UINT64_C(1) << slot;
		w->nonempty |= (uint16_t)(1u << lvl);
		if (w->next_valid && (hint & ~((UINT64_C(1) << shift) - 1)) < w->next_event)
			w->next_event = hint & ~((UINT64_C(1) << shift) - 1);
		return 0;
	}
	return park_other(w, t, value, hint);
}

hot_entry int twheel_park_hint(struct twheel *w, struct tw_timer *t, uint64_t value, tw_tick_t hint)
{
	if (w && HOST_BYPASSED(w, "twheel_park_hint"))
		return -EINVAL;
	return park_hint(w, t, value, hint);
}

void twheel__set_tick(struct twheel *w, uint64_t tick)
{
	w->recip = UINT64_MAX / tick;
}

hot_entry int twheel__park_delay(struct twheel *w, struct tw_timer *t, uint64_t delay, uint64_t from_ns)
{
	tw_tick_t hint;

	if (unlikely(!w))
		return -EINVAL;
	/*
	 * The tick of @from_ns + @delay rounded down, or the one before. Any
	 * hint is right (the design comment), and one at or before the placed
	 * expiry, as this is, lets the placement store it alone. No tick set:
	 * 0, no hint.
	 */
	hint = twheel__div_tick_low(twheel__add_sat(from_ns, delay), w->recip);
	return park_hint(w, t, delay, hint);
}

struct tw_timer *twheel_unpark(struct twheel *w)
{
	struct tw_timer *t;

	if (!w)
		return NULL;
	if (w->park_live) {
		/* the table's last entry that holds one (the table empties
		 * itself when its last timer is released) */
		while (!w->park[w->park_n - 1].t)
			w->park_n--;
		t = w->park[w->park_n - 1].t;
		uint64_t value = release_inplace(w, t);

		unlink_timer(w, t);
		t->expires = value;
	} else if (!tw_list_empty(&w->parked)) {
		t = tw_list_entry(w->parked.next, struct tw_timer, entry);
		tw_list_del(&t->entry);
	} else {
		return NULL;
	}
	mark_not_pending(t);
	w->count--;
	return t;
}

/*
 * twheel_place()'s loop, inlined into each caller with its @expiry known
 * (no call per timer when that is visible here, as twheel__rt_place()'s).
 */
static inline __attribute__((always_inline)) long
place_all(struct twheel *w, tw_tick_t (*expiry)(uint64_t value, void *arg), void *arg)
{
	const tw_tick_t due_limit = w->h.due_limit; /* placing does not move it */
	long n = w->park_live; /* the table's timers, each placed below */

	/* in place: a re-arm from the expiry its slot was chosen by */
	for (uint32_t i = 0; i < w->park_n; i++) {
		struct tw_timer *t = w->park[i].t;

		if (!t)
			continue;
		tw_tick_t e = expiry(t->expires, arg), was = w->park[i].expires;
		uint32_t idx = inplace_slot(t->_idx);

		t->_idx = idx;
		/* mod_stays() for a timer at @was in slot @idx (above level 0) */
		if (likely(e > due_limit) &&
		    (likely(e >= was) || !((e ^ was) >> word_shift[idx / 64]))) {
			t->expires = e;
		} else {
			t->expires = was;
			unlink_timer(w, t);
			link_timer(w, t, e, calc_idx(w, e));
		}
	}
	w->park_n = w->park_live = 0;
	while (!tw_list_empty(&w->parked)) {
		struct tw_timer *t = tw_list_entry(w->parked.next, struct tw_timer, entry);
		tw_tick_t e = expiry(t->expires, arg);

		tw_list_del(&t->entry);
		link_timer(w, t, e, calc_idx(w, e));
		n++;
	}
	w->st.adds += (uint64_t)n;
	return n;
}

long twheel_place(struct twheel *w, tw_tick_t (*expiry)(uint64_t value, void *arg), void *arg)
{
	if (!w || !expiry)
		return -EINVAL;
	return place_all(w, expiry, arg);
}

static inline tw_tick_t rt_place_expiry(uint64_t delay, void *arg)
{
	return twheel__place_expiry(delay, arg);
}

bool twheel__parked(const struct tw_timer *t)
{
	return t->_idx == IDX_PARKED || idx_inplace(t->_idx);
}

/* Nothing parked: a placement without the division its rule needs. */
static inline bool none_parked(const struct twheel *w)
{
	return !w->park_n && tw_list_empty(&w->parked);
}

long twheel__rt_place(struct twheel *w, const struct twheel__place_from *p)
{
	struct twheel__place_from c = *p; /* kept in registers: no timer aliases it */

	if (none_parked(w))
		return 0;
	c.inv = twheel__recip(c.tick); /* one division for the batch */
	return place_all(w, rt_place_expiry, &c);
}

/* twheel__place_deadlines()'s operands. */
struct place_deadlines {
	uint64_t base; /* what the parked deadlines count from */
	struct twheel__place_from from; /* the reading, the tick, the tick to be after */
};

/* The deadline @value points at, re-counted from the reading and written
 * back (a saturated one stays saturated), and its tick by the rt rule. */
static inline tw_tick_t deadline_expiry(uint64_t value, void *arg)
{
	const struct place_deadlines *p = arg;
	uint64_t *dp = (uint64_t *)(uintptr_t)value, d = *dp;

	if (d != UINT64_MAX) {
		d -= p->base; /* the delay */
		d = twheel__add_sat(p->from.now_ns, d);
	}
	*dp = d;
	return twheel__place_deadline(d, &p->from);
}

long twheel__place_deadlines(struct twheel *w, uint64_t base_ns, uint64_t ref_ns,
			     uint64_t tick_ns, tw_tick_t after)
{
	struct place_deadlines c = { base_ns, { tick_ns, 0, ref_ns, after } };

	if (!w || !tick_ns)
		return -EINVAL;
	if (none_parked(w))
		return 0;
	c.from.inv = twheel__recip(tick_ns); /* one division for the batch */
	return place_all(w, deadline_expiry, &c);
}

/* ---- moving a timer ------------------------------------------------------ */

int twheel_move(struct twheel *w, struct tw_timer *dst, struct tw_timer *src)
{
	if (unlikely(!dst || !src))
		return -EINVAL;
#if TWHEEL_DEBUG_CHECKS
	/* before any other error: a timer never initialised says pending */
	if (MISUSE(src->_magic != TW_MAGIC, "timer was not initialised with tw_timer_init()") ||
	    MISUSE(dst->_magic != TW_MAGIC, "twheel_move() to a timer not initialised with tw_timer_init()"))
		return -EINVAL;
#endif
	const bool pending = src->_idx != IDX_NONE;
	if (unlikely(pending && !w))
		return -EINVAL;
	if (dst == src)
		return pending && unlinked(src) ? -EINVAL : pending;
	if (pending && misused(w, src))
		return -EINVAL;
	if (pending && unlinked(src))
		return -EINVAL;
	if (unlikely(dst->_idx != IDX_NONE))
		return unlinked(dst) ? -EINVAL : -EBUSY;
	*dst = *src;
	if (pending) {
		/* take @src's place in its list: the neighbours point at @dst */
		dst->entry.prev->next = &dst->entry;
		dst->entry.next->prev = &dst->entry;
		if (idx_inplace(dst->_idx))
			w->park[inplace_entry(dst->_idx)].t = dst;
	}
	mark_not_pending(src);
	return pending;
}

/* ---- advancing ----------------------------------------------------------- */

/*
 * The next tick after w->now with work on level @lvl (which has a non-empty
 * slot): for level 0 the expiry of the next occupied slot, for level k the
 * cascade tick of the next occupied slot.
 */
static inline tw_tick_t level_next(const struct twheel *w, unsigned lvl)
{
	if (lvl == 0) {
		/* first set bit of the 256-bit ring at or after slot (now + 1) */
		unsigned start = (unsigned)((w->now + 1) & L0_MASK);
		unsigned wi = start / 64, b = start % 64;
		for (unsigned i = 0; i <= 4; i++) {
			unsigned wj = (wi + i) & 3;
			uint64_t m = w->occupied[wj];
			if (i == 0)
				m &= ~UINT64_C(0) << b;
			else if (i == 4)
				m &= (UINT64_C(1) << b) - 1;
			if (m) {
				unsigned pos = wj * 64 + (unsigned)__builtin_ctzll(m);
				return w->now + 1 + ((pos - start) & L0_MASK);
			}
		}
		return TW_TICK_MAX; /* not reached: level 0 is non-empty */
	}
	uint64_t occ = w->occupied[lvl_base(lvl) / 64];
	unsigned shift = lvl_shift(lvl);
	/* index (in slot spans) of the first candidate tick after now */
	tw_tick_t base = (w->now >> shift) + 1;
	unsigned rot = (unsigned)(base & LVL_MASK);
	uint64_t r = rot ? (occ >> rot) | (occ << (64 - rot)) : occ;
	return (base + (tw_tick_t)__builtin_ctzll(r)) << shift;
}

/* The earliest tick after w->now with work in the wheel; TW_TICK_MAX if none. */
static tw_tick_t wheel_next(const struct twheel *w)
{
	tw_tick_t best = TW_TICK_MAX;
	unsigned ne = w->nonempty;
	while (ne) {
		unsigned lvl = (unsigned)__builtin_ctz(ne);
		ne &= ne - 1;
		tw_tick_t t = level_next(w, lvl);
		if (t < best)
			best = t;
	}
	return best;
}

/*
 * The wheel's next tick with work, from the cache when it is valid. Adding
 * to a slot can only bring the next event earlier (link_timer() keeps the
 * cache exact); emptying a slot invalidates it (clear_bit_idx()).
 */
static inline tw_tick_t next_event(struct twheel *w)
{
	if (!w->next_valid) {
		w->next_event = wheel_next(w);
		w->next_valid = true;
	}
	return w->next_event;
}

tw_tick_t twheel_next_expiry(const struct twheel *cw)
{
	if (!cw || cw->count == 0)
		return TW_TICK_MAX;
	/* refreshing the cache is not a visible change: every wheel is malloc'ed, never const */
	struct twheel *w = (struct twheel *)(uintptr_t)cw;
	tw_tick_t next = w->nonempty ? next_event(w) : TW_TICK_MAX;
	if ((w->park_live || !tw_list_empty(&w->parked)) && w->now < next)
		next = w->now; /* a parked timer may be due: place it first */
	if (!tw_list_empty(&w->due) && w->due_min < next)
		next = w->due_min;
	/* inside a callback: timers of this advance still waiting their turn
	 * (the work list is in expiry order, its head is the earliest) */
	if (!tw_list_empty(&w->work)) {
		tw_tick_t e = tw_list_entry(w->work.next, struct tw_timer, entry)->expires;
		if (e < next)
			next = e;
	}
	return next;
}

static inline void cascade_one(struct twheel *w, struct tw_list *p, uint32_t idx)
{
	struct tw_timer *t = tw_list_entry(p, struct tw_timer, entry);
	if (unlikely(t->_idx != idx)) {
		/* parked in place: its expiry is not known yet, off to the parked list */
		uint64_t value = release_inplace(w, t);
		t->expires = value;
		t->_idx = IDX_PARKED;
		tw_list_add_tail(&t->entry, &w->parked);
		return;
	}
	uint32_t to = wheel_idx(w, t->expires);
	t->_idx = to;
	tw_list_add(&t->entry, &w->slots[to]);
	set_bit_idx(w, to);
}

/*
 * Move every timer of slot @idx to a lower level; w->now is C - 1.
 *
 * Walking a list is pointer chasing: each node's address is known only once
 * the previous node has arrived from memory. A circular doubly-linked list
 * can be walked from both ends at once, which keeps two independent misses
 * in flight instead of one, so the walk runs from both ends towards the
 * middle. Each node's links are read before it is re-linked elsewhere.
 */
static void cascade(struct twheel *w, uint32_t idx)
{
	struct tw_list *head = &w->slots[idx];
	struct tw_list *f = head->next, *b = head->prev;
	uint64_t moved = 0;

	tw_list_init(head);
	clear_bit_idx(w, idx);
	for (;;) {
		if (f == b) {
			cascade_one(w, f, idx);
			moved++;
			break;
		}
		struct tw_list *fn = f->next, *bp = b->prev;
		cascade_one(w, f, idx);
		cascade_one(w, b, idx);
		moved += 2;
		if (fn == b)
			break;
		f = fn;
		b = bp;
	}
	w->st.cascades++;
	w->st.cascaded += moved;
}

/* Sort a list by expiry (bottom-up merge sort on the singly-linked chain). */
static struct tw_list *merge(struct tw_list *a, struct tw_list *b)
{
	struct tw_list head, *tail = &head;
	while (a && b) {
		if (tw_list_entry(a, struct tw_timer, entry)->expires <=
		    tw_list_entry(b, struct tw_timer, entry)->expires) {
			tail->next = a;
			a = a->next;
		} else {
			tail->next = b;
			b = b->next;
		}
		tail = tail->next;
	}
	tail->next = a ? a : b;
	return head.next;
}

static void sort_list(struct tw_list *h)
{
	struct tw_list *parts[64] = { 0 };
	int maxlvl = 0;
	if (tw_list_empty(h) || h->next == h->prev)
		return;
	h->prev->next = NULL;
	struct tw_list *p = h->next;
	while (p) {
		struct tw_list *cur = p;
		p = p->next;
		cur->next = NULL;
		int lvl = 0;
		while (parts[lvl]) {
			cur = merge(parts[lvl], cur);
			parts[lvl++] = NULL;
		}
		parts[lvl] = cur;
		if (lvl > maxlvl)
			maxlvl = lvl;
	}
	struct tw_list *all = NULL;
	for (int i = 0; i <= maxlvl; i++)
		if (parts[i])
			all = all ? merge(parts[i], all) : parts[i];
	/* restore prev links */
	struct tw_list *prev = h;
	h->next = all;
	for (p = all; p; p = p->next) {
		p->prev = prev;
		prev = p;
	}
	prev->next = h;
	h->prev = prev;
}

/*
 * The cascades due at tick @e, highest level first, relative to e - 1
 * (the wheel's time is left at e - 1): what twheel_advance() and
 * twheel__catch_up_cascades() do at each tick with work.
 */
static inline void cascade_at(struct twheel *w, tw_tick_t e)
{
	w->now = e - 1;
	unsigned top = 0;
	while (top + 1 < NLEVELS && !(e & ((UINT64_C(1) << lvl_shift(top + 1)) - 1)))
		top++;
	for (unsigned lvl = top; lvl >= 1; lvl--) {
		uint32_t idx = lvl_base(lvl) + (uint32_t)((e >> lvl_shift(lvl)) & LVL_MASK);
		if (bit_is_set(w, idx))
			cascade(w, idx);
	}
}

/*
 * Fire every timer of @list (the due list or a level-0 slot) through w->work.
 * A callback may re-arm or delete any timer still on w->work, so each one
 * is taken off the list's current ends, never from a saved pointer.
 *
 * The due list is sorted by expiry: it fires from the front, and its timers
 * are first marked IDX_WORK, so that a re-arm to the same expiry tells them
 * from timers a callback puts on the due list (those stay). A level-0 slot's
 * timers all expire at the same tick, in no particular order: they keep
 * their slot's index (unlink_timer() tells the lists apart by their head),
 * and fire from both ends in turn. Reaching the next timer is a cache miss
 * known only once the one before it has arrived; taking from both ends
 * keeps two such misses in flight, overlapped with the callbacks, instead
 * of a separate marking pass over the list.
 */
static void fire_list(struct twheel *w, struct tw_list *list, uint32_t idx)
{
	bool both_ends = idx < NSLOTS;

	tw_list_splice_tail_init(list, &w->work);
	w->work_idx = both_ends ? idx : IDX_WORK;
	if (!both_ends) {
		struct tw_list *p;
		tw_list_for_each(p, &w->work)
			tw_list_entry(p, struct tw_timer, entry)->_idx = IDX_WORK;
	}
	for (bool back = false; !tw_list_empty(&w->work); back = both_ends && !back) {
		struct tw_timer *t = tw_list_entry(back ? w->work.prev : w->work.next,
						   struct tw_timer, entry);
		tw_list_del(&t->entry);
		mark_not_pending(t);
		w->count--;
		/* counted before it runs, so that the callback's own
		 * twheel_get_stats() counts it as twheel_count() does */
		w->st.fires++;
		/* the wheel never touches t after this call: it may be freed */
		t->func(t);
	}
	w->work_idx = IDX_WORK;
}

long twheel_advance(struct twheel *w, tw_tick_t target)
{
	if (!w || target < w->now)
		return -EINVAL;
	if (w->running)
		return -EBUSY;
	w->running = true;
	w->h.due_limit = target; /* timers armed by callbacks now wait for later */
	w->st.advances++;
	const uint64_t fires = w->st.fires;

	if (!tw_list_empty(&w->due)) {
		if (!w->due_sorted)
			sort_list(&w->due);
		w->due_sorted = true;
		fire_list(w, &w->due, IDX_DUE);
	}

	while (w->nonempty) {
		tw_tick_t e = next_event(w);
		if (e > target)
			break;
		cascade_at(w, e);
		w->now = e;
		uint32_t s0 = (uint32_t)(e & L0_MASK);
		if (bit_is_set(w, s0)) {
			clear_bit_idx(w, s0);
			fire_list(w, &w->slots[s0], s0);
		}
	}
	w->now = target;
	w->h.due_limit = target;
	w->running = false;
	return (long)(w->st.fires - fires);
}

/*
 * Move the wheel's time on to @target where an advance to it would process
 * nothing: nothing on the due list, and the next tick with work on a slot
 * (a timer's expiry at level 0, a cascade above) later. Nothing moves, so
 * the cache of that next tick stays right; parked timers stay parked (one
 * parked in place is in a slot whose tick is later too).
 */
bool twheel__catch_up(struct twheel *w, tw_tick_t target)
{
	if (!w || w->running || target <= w->now || !tw_list_empty(&w->due) ||
	    (w->nonempty && next_event(w) <= target))
		return false;
	w->now = target;
	w->h.due_limit = target;
	return true;
}

/*
 * twheel__catch_up(), and through the cascades on the way: each slot due
 * to cascade at or before @target is cascaded as twheel_advance() would,
 * and the time stops just before the first tick with a timer's expiry
 * (at level 0, before or after the cascades at that tick). Fires nothing:
 * a timer armed after the wheel idled, placed by deadline from its time
 * then, is moved down to where the wheel at @target would have put it.
 */
bool twheel__catch_up_cascades(struct twheel *w, tw_tick_t target)
{
	if (!w || w->running || target <= w->now || !tw_list_empty(&w->due))
		return false;
	tw_tick_t from = w->now;

	while (w->nonempty) {
		tw_tick_t e = next_event(w);
		uint32_t s0 = (uint32_t)(e & L0_MASK);
		if (e > target)
			break;
		if (bit_is_set(w, s0)) { /* an expiry at e (e is the first tick with work) */
			target = e - 1;
			break;
		}
		cascade_at(w, e);
		if (bit_is_set(w, s0)) { /* cascaded onto e: due there */
			target = e - 1;
			break;
		}
		w->now = e;
	}
	w->now = target;
	w->h.due_limit = target;
	return target > from;
}

tw_tick_t twheel_now(const struct twheel *w)
{
	return w ? w->now : 0;
}

tw_tick_t twheel_target(const struct twheel *w)
{
	if (!w)
		return 0;
	return w->running ? w->h.due_limit : w->now;
}

size_t twheel_count(const struct twheel *w)
{
	return w ? w->count : 0;
}

int twheel_get_stats(const struct twheel *w, struct twheel_stats *st)
{
	if (!w || !st)
		return -EINVAL;
	*st = w->st;
	st->mods_fast = w->h.mods_fast;
	st->mods += st->mods_fast; /* internally, mods counts only those that moved */
	return 0;
}

/* ---- inspection ---------------------------------------------------------- */

static size_t list_length(const struct tw_list *h)
{
	size_t n = 0;
	const struct tw_list *p;
	tw_list_for_each(p, h)
		n++;
	return n;
}

/* The timers of slot @idx that are placed there (not parked in place). */
static size_t slot_placed(const struct twheel *w, uint32_t idx)
{
	size_t n = 0;
	const struct tw_list *p;
	tw_list_for_each(p, &w->slots[idx])
		n += tw_list_entry(p, struct tw_timer, entry)->_idx == idx;
	return n;
}

int twheel_inspect(const struct twheel *w, struct twheel_level_info *info, size_t n, size_t *due)
{
	if (!w || !info || n < NLEVELS)
		return -EINVAL;
	for (unsigned lvl = 0; lvl < NLEVELS; lvl++) {
		struct twheel_level_info *li = &info[lvl];
		unsigned shift = lvl_shift(lvl);
		unsigned nslots = lvl == 0 ? L0_SIZE
				  : shift + LVL_BITS > 64 ? 1u << (64 - shift) : LVL_SIZE;
		li->slots = nslots;
		li->slots_used = 0;
		li->timers = 0;
		li->span = UINT64_C(1) << shift;
		li->next = (w->nonempty & (1u << lvl)) ? level_next(w, lvl) : TW_TICK_MAX;
		for (unsigned s = 0; s < (lvl ? LVL_SIZE : L0_SIZE); s++) {
			uint32_t idx = lvl_base(lvl) + s;
			if (bit_is_set(w, idx)) {
				li->slots_used++;
				li->timers += slot_placed(w, idx);
			}
		}
	}
	if (due)
		*due = list_length(&w->due) + list_length(&w->work);
	return 0;
}

/* ---- checking ------------------------------------------------------------ */

static int violation(char *msg, size_t len, const char *fmt, ...)
{
	if (msg && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return -EUCLEAN;
}

/*
 * Walk list @h; check links, and that each timer says it is at @idx (on the
 * work list: what the advance put there, IDX_WORK or the fired slot's).
 */
static int check_list(const struct twheel *w, const struct tw_list *h, uint32_t idx,
		      size_t *count, size_t *inplace, char *msg, size_t len)
{
	const struct tw_list *p = h, *n;
	size_t limit = w->count + 1;
	for (;;) {
		n = p->next;
		if (!n || n->prev != p)
			return violation(msg, len, "list %u: broken link", idx);
		if (n == h)
			return 0;
		const struct tw_timer *t = tw_list_entry(n, struct tw_timer, entry);
		tw_tick_t e = t->expires;
		if (idx >= L0_SIZE && idx < NSLOTS && idx_inplace(t->_idx) &&
		    inplace_slot(t->_idx) == idx) {
			/* parked in place: judged by the expiry its entry keeps */
			uint32_t i = inplace_entry(t->_idx);
			if (i >= w->park_n || w->park[i].t != t)
				return violation(msg, len, "timer %p parked in slot %u: park entry %u is not its",
						 (const void *)t, idx, i);
			e = w->park[i].expires;
			++*inplace;
		} else if (t->_idx != (idx == IDX_WORK ? w->work_idx : idx)) {
			return violation(msg, len, "timer %p on list %u says it is on list %u",
					 (const void *)t, idx, t->_idx);
		}
		if (!t->func)
			return violation(msg, len, "timer %p has no callback", (const void *)t);
#if TWHEEL_DEBUG_CHECKS
		if (t->_magic != TW_MAGIC || t->_wheel != w)
			return violation(msg, len, "timer %p: bad magic or owner", (const void *)t);
#endif
		if (idx < NSLOTS) {
			unsigned lvl = idx_level(idx), shift = lvl_shift(lvl);
			uint32_t s = idx - lvl_base(lvl);
			if (e <= w->now)
				return violation(msg, len, "timer %p (expiry %llu) in slot %u:%u but now is %llu",
						 (const void *)t, (unsigned long long)e, lvl, s,
						 (unsigned long long)w->now);
			if (wheel_idx(w, e) != idx) {
				/*
				 * Legal only for a level >= 1 timer whose slot's next
				 * cascade tick C (after now, within the level's range)
				 * is at or before its expiry: one placed by expiry and
				 * waiting for C, or one re-armed later since.
				 */
				if (lvl == 0)
					return violation(msg, len, "timer %p (expiry %llu) in level-0 slot %u (now %llu)",
							 (const void *)t, (unsigned long long)e, s,
							 (unsigned long long)w->now);
				tw_tick_t base = (w->now >> shift) + 1;
				tw_tick_t k = (s - base) & LVL_MASK;
				tw_tick_t c = (base + k) << shift;
				tw_tick_t range = shift + LVL_BITS >= 64 ? TW_TICK_MAX
									  : UINT64_C(1) << (shift + LVL_BITS);
				if ((base + k) >> (64 - shift) || c <= w->now || c - w->now > range || c > e)
					return violation(msg, len, "timer %p (expiry %llu) misplaced in slot %u:%u (now %llu)",
							 (const void *)t, (unsigned long long)e, lvl, s,
							 (unsigned long long)w->now);
			}
		} else if (idx == IDX_DUE && t->expires > w->h.due_limit) {
			return violation(msg, len, "timer %p (expiry %llu) on the due list after %llu",
					 (const void *)t, (unsigned long long)t->expires,
					 (unsigned long long)w->h.due_limit);
		} else if (idx == IDX_DUE && t->expires < w->due_min) {
			return violation(msg, len, "due timer %p below due_min", (const void *)t);
		}
		if (++*count > limit)
			return violation(msg, len, "list %u: cycle or count too small", idx);
		p = n;
	}
}

int twheel_check(const struct twheel *w, char *msg, size_t len)
{
	if (!w)
		return -EINVAL;
	if (msg && len)
		msg[0] = '\0';
	size_t count = 0, inplace = 0, live = 0;
	int r;
	if (w->h.due_limit < w->now)
		return violation(msg, len, "due_limit %llu before now %llu",
				 (unsigned long long)w->h.due_limit, (unsigned long long)w->now);
	for (unsigned lvl = 0; lvl < NLEVELS; lvl++) {
		bool any = lvl ? w->occupied[lvl_base(lvl) / 64] != 0 : !level0_empty(w);
		if (any != !!(w->nonempty & (1u << lvl)))
			return violation(msg, len, "level %u: non-empty mask disagrees with bitmap", lvl);
	}
	for (uint32_t idx = 0; idx < NSLOTS; idx++) {
		bool bit = bit_is_set(w, idx);
		if (bit == tw_list_empty(&w->slots[idx]))
			return violation(msg, len, "slot %u: bitmap bit %d but list %s", idx, bit,
					 bit ? "empty" : "non-empty");
		if ((r = check_list(w, &w->slots[idx], idx, &count, &inplace, msg, len)))
			return r;
	}
	if ((r = check_list(w, &w->due, IDX_DUE, &count, &inplace, msg, len)))
		return r;
	if ((r = check_list(w, &w->work, IDX_WORK, &count, &inplace, msg, len)))
		return r;
	if ((r = check_list(w, &w->parked, IDX_PARKED, &count, &inplace, msg, len)))
		return r;
	if (w->park_n > PARK_ENTRIES || w->park_live > w->park_n || (w->park_n && !w->park_live))
		return violation(msg, len, "park table: %u entries used, %u live", w->park_n, w->park_live);
	for (uint32_t i = 0; i < w->park_n; i++)
		live += w->park[i].t != NULL;
	if (live != w->park_live || inplace != live)
		return violation(msg, len, "park table: %u live, %zu entries hold a timer, %zu parked in place",
				 w->park_live, live, inplace);
	if (w->next_valid && w->next_event != wheel_next(w))
		return violation(msg, len, "cached next event %llu, but the wheel's is %llu",
				 (unsigned long long)w->next_event, (unsigned long long)wheel_next(w));
	if (w->due_sorted) {
		const struct tw_list *p;
		tw_tick_t prev = 0;
		tw_list_for_each(p, &w->due) {
			tw_tick_t e = tw_list_entry(p, struct tw_timer, entry)->expires;
			if (e < prev)
				return violation(msg, len, "due list marked sorted but is not");
			prev = e;
		}
	}
	if (count != w->count)
		return violation(msg, len, "count is %zu but %zu timers are linked", w->count, count);
	return 0;
}

/* ---- version ------------------------------------------------------------- */

const char *twheel_version(void)
{
	return TWHEEL_VERSION_STRING;
}

unsigned twheel_version_number(void)
{
	return TWHEEL_VERSION_MAJOR * 10000u + TWHEEL_VERSION_MINOR * 100u + TWHEEL_VERSION_PATCH;
}
