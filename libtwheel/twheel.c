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
 * There are TWHEEL_LEVELS = 11 levels of 64 slots. Every slot is an intrusive
 * doubly-linked list (struct tw_list) of timers. A timer with expiry e is
 * stored, relative to the next tick to process n = now + 1, at
 *
 *	level k = the smallest k with  e - n < 64^(k+1)
 *	slot    = (e >> 6k) & 63
 *
 * i.e. slots are indexed by bits of the *absolute* expiry, as in 2.6, so a
 * re-arm that stays within the same slot span need not move the timer.
 *
 *	level  bits     slots  span of one slot   range (e - n < ...)
 *	    0   0..5       64  1 tick             64 ticks
 *	    1   6..11      64  64                 4096  (2^12)
 *	    2  12..17      64  4096               2^18  (262,144)
 *	    3  18..23      64  2^18               2^24  (16.7 M)
 *	    4  24..29      64  2^24               2^30
 *	    5  30..35      64  2^30               2^36
 *	    6  36..41      64  2^36               2^42
 *	    7  42..47      64  2^42               2^48
 *	    8  48..53      64  2^48               2^54
 *	    9  54..59      64  2^54               2^60
 *	   10  60..63      16  2^60               2^64 (all of tw_tick_t)
 *
 * At 1 ms a tick, level 0 covers 64 ms, level 3 4.6 hours, level 6 139 years;
 * nothing is capped and nothing fires early: the full 64-bit range is exact.
 *
 * Invariants (checked by twheel_check()):
 *   - a level-0 timer in slot s has now < e <= now + 64 and e & 63 == s, so
 *     its slot is processed exactly at tick e;
 *   - a level-k timer (k >= 1) in slot s has its slot's next cascade tick
 *     C = e with the low 6k bits cleared, with now < C; C is the first tick
 *     after now that is a multiple of 64^k and has (C >> 6k) & 63 == s;
 *   - bit s of occupied[k] is set iff slot s of level k is non-empty;
 *   - timers armed at or before the wheel's time (or, during an advance,
 *     at or before its target) wait on the "due" list and run first in the
 *     next advance, sorted by expiry.
 *
 * Cascading: when time reaches a tick C that is a multiple of 64^k, the
 * level-k slot (C >> 6k) & 63 is emptied and each of its timers re-inserted
 * relative to C - 1: every one of them has C <= e < C + 64^k, so it drops
 * to a lower level (those with e == C land in the level-0 slot that is
 * fired at C). A timer therefore moves at most once per level, and is
 * fired from level 0 exactly on its tick.
 *
 * Tickless advance: the next tick with work is the minimum over levels of
 * the next occupied slot's tick (level 0: its expiry; level k: its cascade
 * tick), found with one rotate and one count-trailing-zeros per non-empty
 * level. twheel_advance() jumps from one such tick to the next; cascades
 * that a jump passes over are performed in order because each one is itself
 * such a tick. Skipping 2^32 idle ticks costs the same as skipping one.
 *
 * Memory: 11 * 64 list heads (16 bytes each) plus 11 bitmap words: about
 * 11.5 KiB per wheel, allocated once by twheel_create().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twheel/twheel.h"

#define LVL_BITS TWHEEL_LEVEL_BITS
#define LVL_SIZE TWHEEL_LEVEL_SIZE
#define LVL_MASK (LVL_SIZE - 1)
#define NLEVELS TWHEEL_LEVELS
#define NSLOTS (NLEVELS * LVL_SIZE)

/* Where a pending timer is linked, beyond the wheel slots 0..NSLOTS-1. */
#define IDX_DUE ((uint32_t)NSLOTS)      /* the due list */
#define IDX_WORK ((uint32_t)NSLOTS + 1) /* the list being fired right now */
#define IDX_NONE TW__IDX_NONE

#define TW_MAGIC 0x74776865u /* "twhe" */

#ifndef EUCLEAN
#define EUCLEAN EINVAL
#endif

#if defined(__GNUC__)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define prefetch(p) __builtin_prefetch(p)
#else
#define likely(x) (x)
#define unlikely(x) (x)
#define prefetch(p) ((void)0)
#endif

struct twheel {
	tw_tick_t now;       /* the wheel's time: every tick <= now is processed */
	tw_tick_t due_limit; /* expiries <= this go to the due list */
	size_t count;        /* pending timers, wherever they are linked */
	uint16_t nonempty;   /* bit k set iff occupied[k] != 0 */
	bool running;        /* inside twheel_advance() */
	bool due_sorted;     /* due list is in nondecreasing expiry order */
	tw_tick_t due_last;  /* expiry of the last timer appended to due */
	tw_tick_t due_min;   /* <= every expiry on the due list */
	uint64_t occupied[NLEVELS];
	struct twheel_stats st;
	struct tw_list due;  /* armed at or before due_limit */
	struct tw_list work; /* timers being fired by the current advance */
	struct tw_list slots[NSLOTS];
};

/* ---- misuse reporting (debug builds) ------------------------------------ */

static void default_misuse(const char *what)
{
	fprintf(stderr, "libtwheel: misuse: %s\n", what);
	abort();
}

static twheel_misuse_fn misuse_fn = default_misuse;

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
#else
#define misused(w, t) false
#endif

/* ---- placement ----------------------------------------------------------- */

static inline int level_of(tw_tick_t delta)
{
	/* delta < 64 -> 0; otherwise floor(log2(delta)) / 6 */
	if (delta < LVL_SIZE)
		return 0;
	return (63 - __builtin_clzll(delta)) / LVL_BITS;
}

/*
 * The list index a timer expiring at @e belongs in, given the wheel's time.
 * Expiries at or before due_limit go to the due list.
 */
static inline uint32_t wheel_idx(const struct twheel *w, tw_tick_t e)
{
	int lvl = level_of(e - (w->now + 1)); /* e > now */
	return (uint32_t)(lvl * LVL_SIZE) + (uint32_t)((e >> (lvl * LVL_BITS)) & LVL_MASK);
}

static inline uint32_t calc_idx(const struct twheel *w, tw_tick_t e)
{
	return e <= w->due_limit ? IDX_DUE : wheel_idx(w, e);
}

static inline void set_bit_idx(struct twheel *w, uint32_t idx)
{
	uint32_t lvl = idx / LVL_SIZE;
	w->occupied[lvl] |= UINT64_C(1) << (idx % LVL_SIZE);
	w->nonempty |= (uint16_t)(1u << lvl);
}

static inline void clear_bit_idx(struct twheel *w, uint32_t idx)
{
	uint32_t lvl = idx / LVL_SIZE;
	w->occupied[lvl] &= ~(UINT64_C(1) << (idx % LVL_SIZE));
	if (!w->occupied[lvl])
		w->nonempty &= (uint16_t)~(1u << lvl);
}

/* Link @t (not linked anywhere) with expiry @e at list index @idx. */
static inline void link_timer(struct twheel *w, struct tw_timer *t, tw_tick_t e, uint32_t idx)
{
	t->expires = e;
	t->_idx = idx;
	if (likely(idx < NSLOTS)) {
		tw_list_add(&t->entry, &w->slots[idx]);
		set_bit_idx(w, idx);
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

/* Unlink pending @t from whatever list holds it and keep bitmaps right. */
static inline void unlink_timer(struct twheel *w, struct tw_timer *t)
{
	uint32_t idx = t->_idx;
	tw_list_del(&t->entry);
	if (idx < NSLOTS && tw_list_empty(&w->slots[idx]))
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

void tw_timer_init(struct tw_timer *t, void (*func)(struct tw_timer *t))
{
	if (!t)
		return;
#if TWHEEL_DEBUG_CHECKS
	if (t->_magic == TW_MAGIC && t->_idx != IDX_NONE)
		misuse_fn("tw_timer_init() on a pending timer");
#endif
	memset(t, 0, sizeof(*t));
	t->_idx = IDX_NONE;
	t->func = func;
#if TWHEEL_DEBUG_CHECKS
	t->_magic = TW_MAGIC;
#endif
}

bool tw_timer_pending(const struct tw_timer *t)
{
	return t && t->_idx != IDX_NONE;
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
	w->due_limit = now;
	w->due_sorted = true;
	tw_list_init(&w->due);
	tw_list_init(&w->work);
	for (size_t i = 0; i < NSLOTS; i++)
		tw_list_init(&w->slots[i]);
	return w;
}

/* Hand every pending timer to @fn after unlinking it. */
static void take_all(struct twheel *w, void (*fn)(struct tw_timer *, void *), void *arg)
{
	struct tw_list all;
	tw_list_init(&all);
	tw_list_splice_tail_init(&w->due, &all);
	tw_list_splice_tail_init(&w->work, &all);
	for (int lvl = 0; lvl < NLEVELS; lvl++) {
		uint64_t occ = w->occupied[lvl];
		while (occ) {
			int s = __builtin_ctzll(occ);
			occ &= occ - 1;
			tw_list_splice_tail_init(&w->slots[lvl * LVL_SIZE + s], &all);
		}
		w->occupied[lvl] = 0;
	}
	w->nonempty = 0;
	w->due_sorted = true;
	while (!tw_list_empty(&all)) {
		struct tw_timer *t = tw_list_entry(all.next, struct tw_timer, entry);
		tw_list_del(&t->entry);
		mark_not_pending(t);
		w->count--;
		if (fn)
			fn(t, arg);
	}
}

void twheel_destroy(struct twheel *w)
{
	if (!w)
		return;
#if TWHEEL_DEBUG_CHECKS
	if (w->count)
		misuse_fn("twheel_destroy() on a wheel with pending timers (they are unlinked, not fired)");
#endif
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

int twheel_add(struct twheel *w, struct tw_timer *t, tw_tick_t expires)
{
	if (unlikely(!w || !t || !t->func))
		return -EINVAL;
	if (misused(w, t))
		return -EINVAL;
	if (unlikely(t->_idx != IDX_NONE))
		return -EBUSY;
	link_timer(w, t, expires, calc_idx(w, expires));
#if TWHEEL_DEBUG_CHECKS
	t->_wheel = w;
#endif
	w->count++;
	w->st.adds++;
	return 0;
}

int twheel_mod(struct twheel *w, struct tw_timer *t, tw_tick_t expires)
{
	if (unlikely(!w || !t || !t->func))
		return -EINVAL;
	if (misused(w, t))
		return -EINVAL;
	uint32_t old = t->_idx;
	uint32_t idx = calc_idx(w, expires);
	if (old != IDX_NONE) {
		w->st.mods++;
		/*
		 * Same slot, or same expiry where it already waits: only the
		 * expiry changes. A timer on the list being fired, or one that a
		 * callback re-arms at or before the advance's target, must move:
		 * a timer armed from a callback fires in a later advance.
		 */
		if (old < NSLOTS ? (idx == old || (expires == t->expires && idx != IDX_DUE))
				 : (old == IDX_DUE && expires == t->expires)) {
			t->expires = expires;
			w->st.mods_fast++;
			return 1;
		}
		unlink_timer(w, t);
		link_timer(w, t, expires, idx);
		return 1;
	}
	link_timer(w, t, expires, idx);
#if TWHEEL_DEBUG_CHECKS
	t->_wheel = w;
#endif
	w->count++;
	w->st.adds++;
	return 0;
}

int twheel_del(struct twheel *w, struct tw_timer *t)
{
	if (unlikely(!w || !t))
		return -EINVAL;
#if TWHEEL_DEBUG_CHECKS
	if (misused(w, t))
		return -EINVAL;
#endif
	if (t->_idx == IDX_NONE)
		return 0;
	unlink_timer(w, t);
	mark_not_pending(t);
	w->count--;
	w->st.dels++;
	return 1;
}

/* ---- advancing ----------------------------------------------------------- */

/*
 * The next tick after w->now with work on level @lvl (whose bitmap is
 * non-empty): for level 0 the expiry of the next occupied slot, for level k
 * the cascade tick of the next occupied slot.
 */
static inline tw_tick_t level_next(const struct twheel *w, int lvl)
{
	uint64_t occ = w->occupied[lvl];
	int shift = lvl * LVL_BITS;
	/* index (in units of 64^lvl) of the first candidate tick after now */
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
		int lvl = __builtin_ctz(ne);
		ne &= ne - 1;
		tw_tick_t t = level_next(w, lvl);
		if (t < best)
			best = t;
	}
	return best;
}

tw_tick_t twheel_next_expiry(const struct twheel *w)
{
	if (!w || w->count == 0)
		return TW_TICK_MAX;
	if (!tw_list_empty(&w->due))
		return w->due_min;
	return wheel_next(w);
}

/* Move every timer of slot @idx to a lower level; w->now is C - 1. */
static void cascade(struct twheel *w, uint32_t idx)
{
	struct tw_list *head = &w->slots[idx];
	struct tw_list *p = head->next, *last = head->prev;
	uint64_t moved = 0;

	tw_list_init(head);
	clear_bit_idx(w, idx);
	for (;;) {
		struct tw_list *n = p->next;
		struct tw_timer *t = tw_list_entry(p, struct tw_timer, entry);
		prefetch(n->next);
		uint32_t to = wheel_idx(w, t->expires);
		t->_idx = to;
		tw_list_add(&t->entry, &w->slots[to]);
		set_bit_idx(w, to);
		moved++;
		if (p == last)
			break;
		p = n;
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

/* Fire every timer on w->work, in list order. */
static long fire_work(struct twheel *w)
{
	long n = 0;
	struct tw_list *p;
	tw_list_for_each(p, &w->work)
		tw_list_entry(p, struct tw_timer, entry)->_idx = IDX_WORK;
	while (!tw_list_empty(&w->work)) {
		struct tw_timer *t = tw_list_entry(w->work.next, struct tw_timer, entry);
		tw_list_del(&t->entry);
		mark_not_pending(t);
		w->count--;
		n++;
		/* the wheel never touches t after this call: it may be freed */
		t->func(t);
	}
	w->st.fires += (uint64_t)n;
	return n;
}

long twheel_advance(struct twheel *w, tw_tick_t target)
{
	if (!w || target < w->now)
		return -EINVAL;
	if (w->running)
		return -EBUSY;
	w->running = true;
	w->due_limit = target; /* timers armed by callbacks now wait for later */
	w->st.advances++;
	long fired = 0;

	if (!tw_list_empty(&w->due)) {
		if (!w->due_sorted)
			sort_list(&w->due);
		tw_list_splice_tail_init(&w->due, &w->work);
		w->due_sorted = true;
		fired += fire_work(w);
	}

	while (w->nonempty) {
		tw_tick_t e = wheel_next(w);
		if (e > target)
			break;
		/* cascades due at e, highest level first, relative to e - 1 */
		w->now = e - 1;
		for (int lvl = NLEVELS - 1; lvl >= 1; lvl--) {
			int shift = lvl * LVL_BITS;
			if (e & ((UINT64_C(1) << shift) - 1))
				continue;
			uint32_t s = (uint32_t)((e >> shift) & LVL_MASK);
			if (w->occupied[lvl] & (UINT64_C(1) << s))
				cascade(w, (uint32_t)(lvl * LVL_SIZE) + s);
		}
		w->now = e;
		uint32_t s0 = (uint32_t)(e & LVL_MASK);
		if (w->occupied[0] & (UINT64_C(1) << s0)) {
			tw_list_splice_tail_init(&w->slots[s0], &w->work);
			clear_bit_idx(w, s0);
			fired += fire_work(w);
		}
	}
	w->now = target;
	w->due_limit = target;
	w->running = false;
	return fired;
}

tw_tick_t twheel_now(const struct twheel *w)
{
	return w ? w->now : 0;
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

/* Walk list @h; check links, and that each timer says it is at @idx. */
static int check_list(const struct twheel *w, const struct tw_list *h, uint32_t idx,
		      size_t *count, char *msg, size_t len)
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
		if (t->_idx != idx)
			return violation(msg, len, "timer %p on list %u says it is on list %u",
					 (const void *)t, idx, t->_idx);
		if (!t->func)
			return violation(msg, len, "timer %p has no callback", (const void *)t);
#if TWHEEL_DEBUG_CHECKS
		if (t->_magic != TW_MAGIC || t->_wheel != w)
			return violation(msg, len, "timer %p: bad magic or owner", (const void *)t);
#endif
		if (idx < NSLOTS) {
			uint32_t lvl = idx / LVL_SIZE, s = idx % LVL_SIZE;
			tw_tick_t e = t->expires;
			if (e <= w->now)
				return violation(msg, len, "timer %p (expiry %llu) in slot %u:%u but now is %llu",
						 (const void *)t, (unsigned long long)e, lvl, s,
						 (unsigned long long)w->now);
			if (wheel_idx(w, e) != idx) {
				/* legal only for a level >= 1 timer whose slot's cascade tick is after now */
				if (lvl == 0)
					return violation(msg, len, "timer %p (expiry %llu) in level-0 slot %u",
							 (const void *)t, (unsigned long long)e, s);
				int shift = (int)lvl * LVL_BITS;
				tw_tick_t c = e & ~((UINT64_C(1) << shift) - 1);
				if (((e >> shift) & LVL_MASK) != s || c <= w->now ||
				    c - w->now > (lvl + 1 >= NLEVELS ? TW_TICK_MAX
								      : UINT64_C(1) << (shift + LVL_BITS)))
					return violation(msg, len, "timer %p (expiry %llu) misplaced in slot %u:%u (now %llu)",
							 (const void *)t, (unsigned long long)e, lvl, s,
							 (unsigned long long)w->now);
			}
		} else if (idx == IDX_DUE && t->expires > w->due_limit) {
			return violation(msg, len, "timer %p (expiry %llu) on the due list after %llu",
					 (const void *)t, (unsigned long long)t->expires,
					 (unsigned long long)w->due_limit);
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
	size_t count = 0;
	int r;
	if (w->due_limit < w->now)
		return violation(msg, len, "due_limit %llu before now %llu",
				 (unsigned long long)w->due_limit, (unsigned long long)w->now);
	for (uint32_t lvl = 0; lvl < NLEVELS; lvl++) {
		if (!!w->occupied[lvl] != !!(w->nonempty & (1u << lvl)))
			return violation(msg, len, "level %u: non-empty mask disagrees with bitmap", lvl);
		for (uint32_t s = 0; s < LVL_SIZE; s++) {
			uint32_t idx = lvl * LVL_SIZE + s;
			bool bit = (w->occupied[lvl] >> s) & 1;
			if (bit == tw_list_empty(&w->slots[idx]))
				return violation(msg, len, "slot %u:%u: bitmap bit %d but list %s", lvl, s,
						 bit, bit ? "empty" : "non-empty");
			if ((r = check_list(w, &w->slots[idx], idx, &count, msg, len)))
				return r;
		}
	}
	if ((r = check_list(w, &w->due, IDX_DUE, &count, msg, len)))
		return r;
	if ((r = check_list(w, &w->work, IDX_WORK, &count, msg, len)))
		return r;
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
