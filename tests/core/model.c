/*
 * model.c - differential test driver: every operation is applied to libtwheel
 * and to a reference model (pending flags + a binary min-heap of expiries
 * with lazy deletion), and every return value, every callback (due, pending,
 * in nondecreasing expiry order, armed before the advance began),
 * next_expiry, the count and the final drain are compared.
 *
 * Callbacks act too: they re-arm themselves (also into the past), delete or
 * modify timers due in the same advance, arm others, call twheel_advance()
 * (which must fail with -EBUSY) and free their own timer's memory.
 *
 * Parking: twheel_park() with a value (an expiry, less the shift that
 * the twheel_place() which places it adds: a timer placed by its value
 * alone fires at the wrong tick), twheel_unpark(), twheel_place(),
 * twheel_move() and twheel_drain(), at the top and from callbacks; runs
 * of parks that fill the wheel's table of timers parked in place.
 * twheel_park_hint() with a hint at, before or after the tick the timer
 * will be placed at (the clock went on, or stepped back, between the park
 * and the placement), anywhere, or none: a timer that is not pending
 * waits in the hint's slot until it is placed, and runs of such parks
 * fill the table too. A parked timer is
 * pending, never fires, is in no twheel_inspect() count and makes
 * next_expiry() at most the wheel's time; an advance may pass while timers
 * wait parked (in place in a slot that is cascaded, too), then they are
 * placed, deleted, re-parked, moved, drained.
 *
 * Drains in mid-run act too: the function a drain hands each timer to
 * cancels, re-arms, parks, moves others (handed back already or not yet:
 * one acted on before its turn is not handed back, and stays armed if it
 * was re-armed), arms its own timer again, unparks and places.
 */
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/twheel.h>

#include "../common/splitmix64.h"

/* ---- sources -------------------------------------------------------------- */

static uint64_t prng_next(struct model_src *s)
{
	return splitmix64(&s->state);
}

void model_src_prng(struct model_src *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->next = prng_next;
	s->state = seed;
}

static uint64_t bytes_next(struct model_src *s)
{
	uint64_t v = 0;
	/* two bytes per value keep fuzz inputs short; mix for spread */
	for (int i = 0; i < 2 && s->pos < s->len; i++)
		v = (v << 8) | s->data[s->pos++];
	s->state += v + 1;
	uint64_t z = s->state * UINT64_C(0x9e3779b97f4a7c15);
	return (z ^ (z >> 29)) ^ v;
}

void model_src_bytes(struct model_src *s, const uint8_t *data, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->next = bytes_next;
	s->data = data;
	s->len = len;
}

/* ---- model ---------------------------------------------------------------- */

struct heap_ent {
	tw_tick_t e;
	uint32_t id;
	uint32_t ver;
};

struct obj {
	struct tw_timer t;
	uint32_t id;
};

struct model {
	struct model_src *src;
	struct model_result *res;
	struct twheel *w;
	unsigned n;
	struct obj **objs;     /* the timers under test (callbacks may free them) */
	bool *pending;         /* model: is timer id pending */
	bool *deferred;        /* armed during the current advance */
	tw_tick_t *exp;        /* model: expiry of timer id */
	bool *later;           /* re-armed to a later expiry while pending (may wait in its old slot) */
	uint32_t *ver;         /* bumped on every re-arm/delete */
	struct heap_ent *heap; /* eligible pending timers (lazy deletion) */
	size_t hlen, hcap;
	uint32_t *defer_list;  /* ids armed during the current advance */
	size_t ndefer;
	size_t count;          /* model's pending count */
	tw_tick_t now;
	bool in_advance;
	tw_tick_t target;
	tw_tick_t last_fired;  /* expiry of the previous callback in this advance */
	tw_tick_t cb_now;      /* twheel_now() in that callback (before one: the time) */
	long fired_now;        /* callbacks in the current advance */
	bool failed;
	bool cascade_heavy;    /* mode: log-uniform expiries and steps, many cascades */
	bool parking;          /* mode: park, unpark, place and move too */
	unsigned drained;      /* timers handed back by twheel_drain */
	bool draining;         /* inside a drain whose function acts */
	uint64_t adds, mods, dels; /* what twheel_get_stats() must count */
	uint8_t *to_hand;      /* pending when the drain began (2: parked), not handed back or
			        * acted on yet: off the wheel, parked no more */
	bool *parked;          /* model: timer id is parked (twheel_park()) */
	uint64_t *pval;        /* ...with this value: the expiry to place it at */
	bool *park_pend;       /* ...and was pending when first parked */
	tw_tick_t *park_old;   /* ...at this expiry (where it may still wait) */
	bool *hinted;          /* ...or parked with a hint since (it may wait there) */
	tw_tick_t *hint_min;   /* ...the earliest such hint */
	size_t nparked;
	long placing;          /* expiry callbacks of the running twheel_place() */
	uint64_t shift;        /* ...which places each timer at its value plus this */
};

static struct model *M; /* callbacks need it; one model runs at a time */

static void fail(struct model *m, const char *fmt, ...)
{
	if (m->failed)
		return;
	m->failed = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->res->failure, sizeof(m->res->failure), fmt, ap);
	va_end(ap);
}

#define CHECK(m, cond, ...)                     \
	do {                                    \
		if (!(cond)) {                  \
			fail((m), __VA_ARGS__); \
			return;                 \
		}                               \
	} while (0)

static uint64_t rnd(struct model *m)
{
	return m->src->next(m->src);
}

static uint64_t rnd_below(struct model *m, uint64_t n)
{
	return n ? rnd(m) % n : 0;
}

static bool heap_less(const struct heap_ent *a, const struct heap_ent *b)
{
	return a->e < b->e;
}

static void heap_push(struct model *m, tw_tick_t e, uint32_t id)
{
	if (m->hlen == m->hcap) {
		m->hcap = m->hcap ? m->hcap * 2 : 64;
		m->heap = realloc(m->heap, m->hcap * sizeof(*m->heap));
		if (!m->heap)
			abort();
	}
	size_t i = m->hlen++;
	struct heap_ent x = { e, id, m->ver[id] };
	while (i) {
		size_t p = (i - 1) / 2;
		if (!heap_less(&x, &m->heap[p]))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = x;
}

static void heap_pop(struct model *m)
{
	struct heap_ent x = m->heap[--m->hlen];
	size_t i = 0, n = m->hlen;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && heap_less(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!heap_less(&m->heap[c], &x))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (n)
		m->heap[i] = x;
}

static bool ent_valid(struct model *m, const struct heap_ent *h)
{
	return m->pending[h->id] && !m->deferred[h->id] && m->ver[h->id] == h->ver;
}

/* The minimum expiry among eligible pending timers, or false if none. */
static bool heap_min(struct model *m, tw_tick_t *e)
{
	while (m->hlen && !ent_valid(m, &m->heap[0]))
		heap_pop(m);
	if (!m->hlen)
		return false;
	*e = m->heap[0].e;
	return true;
}

/* The earliest pending expiry overall (eligible or deferred). */
static bool model_earliest(struct model *m, tw_tick_t *e)
{
	bool any = heap_min(m, e);
	for (size_t i = 0; i < m->ndefer; i++) {
		uint32_t id = m->defer_list[i];
		if (m->pending[id] && m->deferred[id] && !m->parked[id] && (!any || m->exp[id] < *e)) {
			*e = m->exp[id];
			any = true;
		}
	}
	return any;
}

/* Model side of arming timer @id at @e. */
static void model_unpark(struct model *m, uint32_t id)
{
	if (m->parked[id])
		m->nparked--;
	m->parked[id] = false;
}

static void model_arm(struct model *m, uint32_t id, tw_tick_t e)
{
	m->to_hand[id] = 0; /* a drain no longer hands it back */
	model_unpark(m, id);
	if (!m->pending[id])
		m->count++;
	m->pending[id] = true;
	m->exp[id] = e;
	m->ver[id]++;
	if (m->in_advance) {
		if (!m->deferred[id]) {
			m->deferred[id] = true;
			m->defer_list[m->ndefer++] = id;
		}
	} else {
		m->deferred[id] = false;
		heap_push(m, e, id);
	}
}

static void model_disarm(struct model *m, uint32_t id)
{
	m->to_hand[id] = 0;
	if (m->pending[id])
		m->count--;
	model_unpark(m, id);
	m->pending[id] = false;
	m->later[id] = false;
	m->ver[id]++;
}

/* A random expiry: near now, in the past, far away, or at the very end. */
static tw_tick_t rnd_expiry(struct model *m)
{
	tw_tick_t base = m->in_advance ? m->target : m->now;
	uint64_t r = rnd(m);
	if (m->cascade_heavy && r % 10 < 7) {
		uint64_t d = rnd_below(m, UINT64_C(1) << rnd_below(m, 30));
		return base + d < base ? TW_TICK_MAX : base + d;
	}
	switch (r % 16) {
	case 0: { /* the past */
		uint64_t d = rnd_below(m, 100);
		return d > base ? 0 : base - d;
	}
	case 1:
		return base;
	case 2:
		return TW_TICK_MAX - rnd_below(m, 4);
	case 3: { /* far: any power of two scale */
		unsigned bits = (unsigned)rnd_below(m, 64);
		uint64_t d = rnd(m) >> (63 - bits);
		return base + d < base ? TW_TICK_MAX : base + d;
	}
	case 4: case 5: { /* around a level boundary */
		/* level k's slot span is 2^(6k+2) (256 one-tick slots at level 0) */
		unsigned lvl = (unsigned)rnd_below(m, rnd_below(m, 2) ? 4 : 11);
		uint64_t span = lvl == 0 ? 1 : UINT64_C(1) << (6 * lvl + 2);
		uint64_t d = span * (1 + rnd_below(m, 64)) + rnd_below(m, 3) - 1;
		return base + d < base ? TW_TICK_MAX : base + d;
	}
	default: { /* near future */
		uint64_t d = rnd_below(m, (r >> 8) % 3 == 0 ? 5000 : 200);
		return base + d < base ? TW_TICK_MAX : base + d;
	}
	}
}

static void op_add(struct model *m, uint32_t id, tw_tick_t e);
static void check_counts(struct model *m);
static void check_next_expiry(struct model *m);
static void op_mod(struct model *m, uint32_t id, tw_tick_t e);
static void op_del(struct model *m, uint32_t id);
static void op_park(struct model *m, uint32_t id, uint64_t v);
static void op_park_hint(struct model *m, uint32_t id, uint64_t v);
static void op_unpark(struct model *m);
static void op_place(struct model *m);
static void op_move(struct model *m, uint32_t id);

static void on_fire(struct tw_timer *t)
{
	struct model *m = M;
	struct obj *o = tw_container_of(t, struct obj, t);
	uint32_t id = o->id;
	m->res->fires++;
	m->fired_now++;
	CHECK(m, m->in_advance, "callback for %u outside an advance", id);
	CHECK(m, !tw_timer_pending(t), "timer %u pending inside its callback", id);
	CHECK(m, m->pending[id], "timer %u fired but the model has it not pending", id);
	CHECK(m, !m->parked[id], "timer %u fired while parked", id);
	CHECK(m, !m->deferred[id], "timer %u fired in the advance that armed it", id);
	CHECK(m, t->expires == m->exp[id], "timer %u fired with expiry %" PRIu64 ", model %" PRIu64,
	      id, t->expires, m->exp[id]);
	CHECK(m, t->expires <= m->target, "timer %u (expiry %" PRIu64 ") fired early: advance to %" PRIu64,
	      id, t->expires, m->target);
	CHECK(m, t->expires >= m->last_fired, "out of order: %" PRIu64 " after %" PRIu64,
	      t->expires, m->last_fired);
	tw_tick_t min;
	CHECK(m, heap_min(m, &min) && min == t->expires,
	      "timer %u (expiry %" PRIu64 ") fired before an earlier one (%" PRIu64 ")", id, t->expires, min);
	/* the wheel's time is the tick being fired: at or after the timer's
	 * expiry and the ticks fired before in this advance, at most its
	 * target, which twheel_target() gives */
	CHECK(m, twheel_target(m->w) == m->target, "target() %" PRIu64 " in a callback, advance to %" PRIu64,
	      twheel_target(m->w), m->target);
	CHECK(m, twheel_now(m->w) >= t->expires && twheel_now(m->w) >= m->cb_now &&
		 twheel_now(m->w) <= m->target,
	      "now() %" PRIu64 " in the callback of timer %u (expiry %" PRIu64 "), %" PRIu64
	      " in the one before, advance to %" PRIu64,
	      twheel_now(m->w), id, t->expires, m->cb_now, m->target);
	m->cb_now = twheel_now(m->w);
	m->last_fired = t->expires;
	model_disarm(m, id);
	CHECK(m, twheel_count(m->w) == m->count, "count %zu, model %zu in callback",
	      twheel_count(m->w), m->count);

	/* act */
	unsigned acts = (unsigned)rnd_below(m, 3);
	bool freed = false;
	for (unsigned i = 0; i < acts && !m->failed; i++) {
		uint64_t r = rnd_below(m, 120);
		m->res->ops++;
		if (r < 25) {
			if (!freed)
				(r & 1 ? op_mod : op_add)(m, id, rnd_expiry(m));
		} else if (r < 45) {
			op_del(m, (uint32_t)rnd_below(m, m->n));
		} else if (r < 60) {
			op_mod(m, (uint32_t)rnd_below(m, m->n), rnd_expiry(m));
		} else if (r < 65) {
			/* re-arm another timer at its own expiry (fast path) */
			uint32_t o2 = (uint32_t)rnd_below(m, m->n);
			op_mod(m, o2, m->objs[o2]->t.expires);
		} else if (r < 75) {
			op_add(m, (uint32_t)rnd_below(m, m->n), rnd_expiry(m));
		} else if (r < 85) {
			long rc = twheel_advance(m->w, m->target);
			CHECK(m, rc == -EBUSY, "advance from a callback returned %ld, want -EBUSY", rc);
		} else if (r < 95) {
			/* free our own memory and replace it (only if not re-armed) */
			if (!m->pending[id] && !freed && m->objs[id] == o) {
				free(o);
				struct obj *n = malloc(sizeof(*n));
				if (!n)
					abort();
				tw_timer_init(&n->t, on_fire);
				n->id = id;
				m->objs[id] = n;
				freed = true;
			}
		} else if (r < 100) {
			/* as at the top: the running advance's timers count as pending */
			check_next_expiry(m);
			if (r == 99) /* inspect() walks every slot: now and then */
				check_counts(m);
		} else if (r < 108) {
			uint32_t o2 = r & 1 || freed ? (uint32_t)rnd_below(m, m->n) : id;
			(r & 2 ? op_park_hint : op_park)(m, o2, rnd_expiry(m));
		} else if (r < 112) {
			op_place(m);
		} else if (r < 115) {
			op_unpark(m);
		} else {
			/* move another timer (this one may be freed already) */
			uint32_t o2 = (uint32_t)rnd_below(m, m->n);
			if (o2 != id)
				op_move(m, o2);
		}
	}
}

static void op_add(struct model *m, uint32_t id, tw_tick_t e)
{
	int rc = twheel_add(m->w, &m->objs[id]->t, e);
	int want = m->pending[id] ? -EBUSY : 0;
	CHECK(m, rc == want, "add(%u, %" PRIu64 ") = %d, want %d", id, e, rc, want);
	if (rc == 0) {
		m->adds++;
		model_arm(m, id, e);
	}
}

static void op_mod(struct model *m, uint32_t id, tw_tick_t e)
{
	int rc = twheel_mod(m->w, &m->objs[id]->t, e);
	int want = m->pending[id] ? 1 : 0;
	CHECK(m, rc == want, "mod(%u, %" PRIu64 ") = %d, want %d", id, e, rc, want);
	if (m->pending[id] && e > m->exp[id])
		m->later[id] = true;
	if (m->pending[id])
		m->mods++;
	else
		m->adds++;
	model_arm(m, id, e);
}

static void op_del(struct model *m, uint32_t id)
{
	int rc = twheel_del(m->w, &m->objs[id]->t);
	int want = m->pending[id] ? 1 : 0;
	CHECK(m, rc == want, "del(%u) = %d, want %d", id, rc, want);
	/* cancelled while parked (in place or not), it keeps its value, as
	 * a drained or unparked one does */
	CHECK(m, !m->parked[id] || m->objs[id]->t.expires == m->pval[id],
	      "del(%u) of a parked timer: expires %" PRIu64 ", its value %" PRIu64, id,
	      m->objs[id]->t.expires, m->pval[id]);
	m->dels += rc == 1;
	model_disarm(m, id);
}

static bool far_placed(const struct model *m, uint32_t id)
{
	return m->pending[id] && !m->parked[id] && m->exp[id] > m->now + 256;
}

static bool not_pending(const struct model *m, uint32_t id)
{
	return !m->pending[id];
}

static bool is_parked(const struct model *m, uint32_t id)
{
	return m->parked[id];
}

/* A random timer that @want, if one of the first 64 from a random start is. */
static uint32_t pick(struct model *m, bool (*want)(const struct model *, uint32_t))
{
	uint32_t id = (uint32_t)rnd_below(m, m->n);
	for (unsigned k = 0; k < 64 && k < m->n; k++, id = (id + 1) % m->n)
		if (want(m, id))
			break;
	return id;
}

/* twheel_park(), or twheel_park_hint() with @hint if @with_hint. */
static void park_with(struct model *m, uint32_t id, uint64_t v, bool with_hint, tw_tick_t hint)
{
	struct tw_timer *t = &m->objs[id]->t;
	int rc = with_hint ? twheel_park_hint(m->w, t, v, hint) : twheel_park(m->w, t, v);
	int want = m->pending[id] ? 1 : 0;
	CHECK(m, rc == want, "park%s(%u, %" PRIu64 ", %" PRIu64 ") = %d, want %d",
	      with_hint ? "_hint" : "", id, v, hint, rc, want);
	CHECK(m, tw_timer_pending(t) && t->expires == v, "parked timer %u: pending %d, expires %" PRIu64
	      " (value %" PRIu64 ")", id, tw_timer_pending(t), t->expires, v);
	m->to_hand[id] = 0;
	if (!m->parked[id]) {
		m->park_pend[id] = m->pending[id];
		m->park_old[id] = m->exp[id];
		m->hinted[id] = false;
		m->parked[id] = true;
		m->nparked++;
	}
	if (with_hint && (!m->hinted[id] || hint < m->hint_min[id])) {
		m->hinted[id] = true;
		m->hint_min[id] = hint;
	}
	if (!m->pending[id])
		m->count++;
	m->pending[id] = true;
	m->pval[id] = v;
	m->ver[id]++; /* off the heap: no expiry until it is placed */
}

static void op_park(struct model *m, uint32_t id, uint64_t v)
{
	park_with(m, id, v, false, 0);
}

/* A value more than a first level's span from now: its hint's slot is above it. */
static uint64_t far_value(struct model *m)
{
	tw_tick_t base = m->in_advance ? m->target : m->now;
	uint64_t d = 257 + rnd_below(m, UINT64_C(1) << rnd_below(m, 22));
	return base + d < base ? TW_TICK_MAX : base + d;
}

/*
 * A hint as a host gives it (the value less what the clock will go on by
 * before the placement, or the value itself), after the value (the clock
 * stepped back), far from it either way, anywhere, or none (0).
 */
static void op_park_hint(struct model *m, uint32_t id, uint64_t v)
{
	tw_tick_t h;
	uint64_t d;
	switch (rnd_below(m, 8)) {
	case 0:
	case 1:
		h = v;
		break;
	case 2:
	case 3:
		d = rnd_below(m, UINT64_C(1) << rnd_below(m, 16));
		h = v < d ? 0 : v - d;
		break;
	case 4:
		d = rnd_below(m, UINT64_C(1) << rnd_below(m, 16));
		h = v + d < v ? TW_TICK_MAX : v + d;
		break;
	case 5:
		d = rnd(m) >> rnd_below(m, 64);
		h = rnd_below(m, 2) ? (v < d ? 0 : v - d) : (v + d < v ? TW_TICK_MAX : v + d);
		break;
	case 6:
		h = rnd_expiry(m);
		break;
	default:
		h = rnd_below(m, 2) ? 0 : m->now;
		break;
	}
	park_with(m, id, v, true, h);
}

/* twheel_unpark(): one parked timer back, not pending, with its value. */
static void op_unpark(struct model *m)
{
	struct tw_timer *t = twheel_unpark(m->w);
	if (!m->nparked) {
		CHECK(m, !t, "unpark returned a timer with none parked");
		return;
	}
	CHECK(m, t, "unpark returned NULL with %zu parked", m->nparked);
	uint32_t id = tw_container_of(t, struct obj, t)->id;
	CHECK(m, id < m->n && &m->objs[id]->t == t && m->parked[id],
	      "unpark returned timer %u, which is not parked", id);
	CHECK(m, !tw_timer_pending(t) && t->expires == m->pval[id],
	      "unparked timer %u: pending %d, expires %" PRIu64 ", value %" PRIu64, id,
	      tw_timer_pending(t), t->expires, m->pval[id]);
	model_disarm(m, id);
	if (rnd_below(m, 2))
		op_add(m, id, rnd_expiry(m)); /* as a loop would: arm it at once */
}

static tw_tick_t place_shifted(uint64_t value, void *arg)
{
	struct model *m = arg;
	m->placing++;
	return value > TW_TICK_MAX - m->shift ? TW_TICK_MAX : value + m->shift;
}

/* twheel_place(): every parked timer armed at its value plus a shift. */
static void op_place(struct model *m)
{
	size_t want = m->nparked;
	m->placing = 0;
	m->shift = rnd_below(m, 3) ? 0 : rnd_below(m, UINT64_C(1) << rnd_below(m, 24));
	long rc = twheel_place(m->w, place_shifted, m);
	CHECK(m, rc == (long)want && m->placing == rc, "place = %ld (%ld values asked), want %zu", rc,
	      m->placing, want);
	for (uint32_t id = 0; id < m->n && m->nparked; id++) {
		if (!m->parked[id])
			continue;
		/* one parked in place that stays is a re-arm from where it waits */
		tw_tick_t e = m->pval[id] > TW_TICK_MAX - m->shift ? TW_TICK_MAX : m->pval[id] + m->shift;
		if ((m->park_pend[id] && e > m->park_old[id]) || (m->hinted[id] && e > m->hint_min[id]))
			m->later[id] = true;
		m->adds++;
		model_arm(m, id, e);
	}
	CHECK(m, twheel_place(m->w, NULL, m) == -EINVAL && twheel_place(NULL, place_shifted, m) == -EINVAL,
	      "place with NULL arguments did not fail");
}

/* twheel_move() to a fresh object, which takes the old one's id. */
static void op_move(struct model *m, uint32_t id)
{
	struct obj *o = m->objs[id], *n = malloc(sizeof(*n));
	if (!n)
		abort();
	tw_timer_init(&n->t, on_fire);
	n->id = id;
	tw_tick_t e = o->t.expires;
	int rc = twheel_move(m->w, &n->t, &o->t);
	free(o);
	m->objs[id] = n;
	CHECK(m, rc == (m->pending[id] ? 1 : 0), "move(%u) = %d, model pending %d", id, rc, m->pending[id]);
	CHECK(m, tw_timer_pending(&n->t) == m->pending[id] && n->t.expires == e,
	      "moved timer %u: pending %d, expires %" PRIu64 ", was %" PRIu64, id,
	      tw_timer_pending(&n->t), n->t.expires, e);
}

static void on_drain(struct tw_timer *t, void *arg);

/*
 * twheel_drain(): every timer pending at its start back once (parked ones
 * with their value), but those its function acted on before their turn;
 * it acts if @act. What that armed stays pending.
 */
static void drain(struct model *m, bool act)
{
	m->drained = 0;
	for (uint32_t id = 0; id < m->n; id++) {
		m->to_hand[id] = m->pending[id] ? 1 + m->parked[id] : 0;
		model_unpark(m, id); /* the drain took it: placing finds it no more */
	}
	m->draining = act;
	twheel_drain(m->w, on_drain, m);
	m->draining = false;
	if (m->failed)
		return;
	for (uint32_t id = 0; id < m->n; id++)
		CHECK(m, !m->to_hand[id], "drain did not hand back timer %u (%u handed back)", id,
		      m->drained);
	CHECK(m, twheel_count(m->w) == m->count, "count %zu after a drain, model %zu",
	      twheel_count(m->w), m->count);
}

/* twheel_drain() in mid-run, its function acting on the wheel. */
static void op_drain(struct model *m)
{
	char msg[256];

	drain(m, true);
	if (!m->failed && twheel_check(m->w, msg, sizeof(msg)))
		fail(m, "twheel_check after a drain: %s", msg);
	check_next_expiry(m);
	check_counts(m);
}

static void op_advance(struct model *m, tw_tick_t target)
{
	if (target < m->now) {
		long rc = twheel_advance(m->w, target);
		CHECK(m, rc == -EINVAL, "advance into the past returned %ld", rc);
		return;
	}
	m->in_advance = true;
	m->target = target;
	m->last_fired = 0;
	m->cb_now = m->now;
	m->fired_now = 0;
	m->ndefer = 0;
	long rc = twheel_advance(m->w, target);
	m->in_advance = false;
	if (m->failed)
		return;
	CHECK(m, rc == m->fired_now, "advance returned %ld, %ld callbacks ran", rc, m->fired_now);
	CHECK(m, twheel_target(m->w) == target, "target() %" PRIu64 " after an advance to %" PRIu64,
	      twheel_target(m->w), target);
	tw_tick_t min;
	CHECK(m, !heap_min(m, &min) || min > target,
	      "advance to %" PRIu64 " left a due timer (expiry %" PRIu64 ") unfired", target, min);
	for (size_t i = 0; i < m->ndefer; i++) {
		uint32_t id = m->defer_list[i];
		if (m->pending[id] && m->deferred[id] && !m->parked[id])
			heap_push(m, m->exp[id], id);
		m->deferred[id] = false;
	}
	m->ndefer = 0;
	m->now = target;
	m->res->advances++;
	CHECK(m, twheel_now(m->w) == target, "now %" PRIu64 " after advance to %" PRIu64,
	      twheel_now(m->w), target);
}

/* Counters and inspect() agree with the model. */
static void check_counts(struct model *m)
{
	struct twheel_stats st;
	struct twheel_level_info li[TWHEEL_LEVELS];
	size_t due = 0, sum;

	twheel_get_stats(m->w, &st);
	CHECK(m, st.adds == m->adds && st.mods == m->mods && st.dels == m->dels &&
	      st.fires == m->res->fires && st.mods_fast <= st.mods,
	      "stats adds %" PRIu64 " mods %" PRIu64 " (fast %" PRIu64 ") dels %" PRIu64 " fires %" PRIu64
	      "; model %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "%s",
	      st.adds, st.mods, st.mods_fast, st.dels, st.fires, m->adds, m->mods, m->dels,
	      m->res->fires, m->in_advance ? " (in a callback)" : "");
	/* an advance counts from its start: its callbacks see it counted */
	CHECK(m, st.advances == m->res->advances + m->in_advance && st.cascaded >= st.cascades,
	      "stats advances %" PRIu64 ", model %" PRIu64 "%s; %" PRIu64 " timers cascaded by %"
	      PRIu64 " cascades", st.advances, m->res->advances,
	      m->in_advance ? " and the running one" : "", st.cascaded, st.cascades);
	CHECK(m, twheel_inspect(m->w, li, TWHEEL_LEVELS, &due) == 0, "inspect failed");
	sum = due;
	for (unsigned l = 0; l < TWHEEL_LEVELS; l++)
		sum += li[l].timers;
	CHECK(m, sum == m->count - m->nparked, "inspect counts %zu timers, model %zu placed%s", sum,
	      m->count - m->nparked, m->in_advance ? " (in a callback)" : "");
}

static void check_next_expiry(struct model *m)
{
	tw_tick_t next = twheel_next_expiry(m->w), min;
	/* from a callback, the wheel's time is the tick being fired */
	tw_tick_t now = m->in_advance ? twheel_now(m->w) : m->now;
	if (m->nparked)
		CHECK(m, next <= now, "next_expiry %" PRIu64 " after now %" PRIu64 " with %zu parked",
		      next, now, m->nparked);
	if (!model_earliest(m, &min)) {
		if (m->nparked)
			return;
		CHECK(m, next == TW_TICK_MAX, "next_expiry %" PRIu64 " with nothing pending", next);
		return;
	}
	CHECK(m, next <= min, "next_expiry %" PRIu64 " after the earliest expiry %" PRIu64, next, min);
	/* (from a callback, the lower bound the due list keeps may be that of
	 * a timer armed from a callback and cancelled since: no check) */
	if (min > now && !m->nparked && !m->in_advance)
		CHECK(m, next > now, "next_expiry %" PRIu64 " <= now %" PRIu64 " with nothing due",
		      next, now);
}

/*
 * Advance to next_expiry() repeatedly: the earliest timer fires within
 * LEVELS+1 steps, plus one per pending timer re-armed later (twheel.h).
 */
static void op_chase(struct model *m)
{
	tw_tick_t min;
	if (m->nparked) {
		/* next_expiry() says "now" while any is parked */
		if (rnd_below(m, 4))
			return;
		op_place(m);
	}
	if (m->failed || !model_earliest(m, &min))
		return;
	if (min > m->now && min - m->now > (UINT64_C(1) << 44) && rnd_below(m, 64))
		return;
	if (min <= m->now) {
		op_advance(m, m->now);
		return;
	}
	uint64_t before = m->res->fires;
	int allowed = TWHEEL_LEVELS + 1;
	for (unsigned i = 0; i < m->n; i++)
		allowed += m->pending[i] && m->later[i];
	for (int step = 0; step < allowed && !m->failed; step++) {
		tw_tick_t next = twheel_next_expiry(m->w);
		CHECK(m, next > m->now && next <= min, "chase: next_expiry %" PRIu64 " (now %" PRIu64
		      ", earliest %" PRIu64 ")", next, m->now, min);
		op_advance(m, next);
		if (m->res->fires > before)
			return;
	}
	CHECK(m, m->res->fires > before, "earliest timer %" PRIu64 " not reached in %d advances",
	      min, allowed);
}

static void on_drain(struct tw_timer *t, void *arg)
{
	struct model *m = arg;
	struct obj *o = tw_container_of(t, struct obj, t);
	CHECK(m, !tw_timer_pending(t), "drained timer %u still pending", o->id);
	CHECK(m, m->pending[o->id], "drained timer %u that the model has not pending", o->id);
	CHECK(m, m->to_hand[o->id], "timer %u drained twice, or after it was acted on", o->id);
	CHECK(m, m->to_hand[o->id] != 2 || t->expires == m->pval[o->id],
	      "drained parked timer %u: expires %" PRIu64 ", value %" PRIu64, o->id, t->expires,
	      m->pval[o->id]);
	m->drained++;
	uint32_t id = o->id;
	model_disarm(m, id);
	if (!m->draining)
		return;
	/* act: on timers not handed back yet as much as on the others */
	for (unsigned acts = (unsigned)rnd_below(m, 3); acts > 0 && !m->failed; acts--) {
		uint32_t o2 = (uint32_t)rnd_below(m, m->n);
		m->res->ops++;
		switch (rnd_below(m, 9)) {
		case 0:
			op_del(m, o2);
			break;
		case 1:
			op_mod(m, o2, rnd_expiry(m));
			break;
		case 2:
			op_add(m, rnd_below(m, 2) ? id : o2, rnd_expiry(m));
			break;
		case 3:
			op_park(m, o2, rnd_expiry(m));
			break;
		case 4:
			op_park_hint(m, o2, far_value(m));
			break;
		case 5:
			op_move(m, o2); /* this one too: it is not pending */
			break;
		case 6:
			op_unpark(m);
			break;
		case 7:
			op_place(m);
			break;
		default:
			/* an idle timeout pushed back (the inline re-arm) */
		{
			tw_tick_t e = m->objs[o2]->t.expires, d = 1 + rnd_below(m, 1u << 20);
			op_mod(m, o2, e > TW_TICK_MAX - d ? TW_TICK_MAX : e + d);
			break;
		}
		}
	}
}

int model_run(struct model_src *src, uint64_t ops, unsigned ntimers, struct model_result *res)
{
	memset(res, 0, sizeof(*res));
	if (ntimers == 0 || ntimers > 65536)
		ntimers = 64;
	struct model mm = { 0 }, *m = &mm;
	M = m;
	m->src = src;
	m->res = res;
	m->n = ntimers;
	m->objs = calloc(ntimers, sizeof(*m->objs));
	m->pending = calloc(ntimers, sizeof(bool));
	m->deferred = calloc(ntimers, sizeof(bool));
	m->to_hand = calloc(ntimers, sizeof(uint8_t));
	m->exp = calloc(ntimers, sizeof(tw_tick_t));
	m->later = calloc(ntimers, sizeof(bool));
	m->ver = calloc(ntimers, sizeof(uint32_t));
	m->defer_list = calloc(ntimers, sizeof(uint32_t));
	m->parked = calloc(ntimers, sizeof(bool));
	m->pval = calloc(ntimers, sizeof(uint64_t));
	m->park_pend = calloc(ntimers, sizeof(bool));
	m->park_old = calloc(ntimers, sizeof(tw_tick_t));
	m->hinted = calloc(ntimers, sizeof(bool));
	m->hint_min = calloc(ntimers, sizeof(tw_tick_t));
	if (!m->objs || !m->pending || !m->deferred || !m->exp || !m->later || !m->ver || !m->defer_list ||
	    !m->to_hand || !m->parked || !m->pval || !m->park_pend || !m->park_old || !m->hinted ||
	    !m->hint_min)
		abort();
	for (unsigned i = 0; i < ntimers; i++) {
		m->objs[i] = malloc(sizeof(struct obj));
		if (!m->objs[i])
			abort();
		tw_timer_init(&m->objs[i]->t, on_fire);
		m->objs[i]->id = i;
	}
	/* start anywhere, sometimes close to the end of time */
	uint64_t r = rnd(m);
	m->cascade_heavy = (r >> 8) % 2;
	m->parking = (r >> 9) % 4 != 0; /* parks, places and moves in 3 runs of 4 */
	m->now = r % 4 == 0 ? TW_TICK_MAX - rnd_below(m, UINT64_C(1) << 20)
		 : r % 4 == 1 ? 0 : rnd(m) >> (16 + rnd(m) % 48);
	m->w = twheel_create(m->now);
	if (!m->w)
		abort();

	char msg[256];
	for (uint64_t i = 0; i < ops && !m->failed; i++) {
		if (src->data && src->pos >= src->len)
			break;
		res->ops++;
		uint32_t id = (uint32_t)rnd_below(m, ntimers);
		uint64_t op = rnd_below(m, m->parking ? 1100 : 1000);
		if (op >= 1000) {
			if (op < 1050) {
				(rnd_below(m, 2) ? op_park_hint : op_park)(m, id, rnd_expiry(m));
			} else if (op < 1056) {
				/* a run of parks of timers placed far off, or of
				 * timers not pending with hints (those the wheel
				 * parks in place): more than its table holds */
				bool hints = rnd_below(m, 2);
				for (uint64_t k = rnd_below(m, 100); k > 0 && !m->failed; k--) {
					if (hints)
						op_park_hint(m, pick(m, not_pending), far_value(m));
					else
						op_park(m, pick(m, far_placed), rnd_expiry(m));
				}
			} else if (op < 1068) {
				op_place(m);
			} else if (op < 1078) {
				op_unpark(m);
			} else if (op < 1098) {
				op_move(m, rnd_below(m, 2) ? pick(m, is_parked) : id);
			} else {
				op_drain(m);
			}
		} else if (op < 300) {
			op_add(m, id, rnd_expiry(m));
		} else if (op < 450) {
			op_mod(m, id, rnd_expiry(m));
		} else if (op < 500) {
			/* same expiry, one close to it (likely the same slot), or a
			 * later one anywhere (an idle timeout pushed back) */
			tw_tick_t d = rnd_below(m, 2) ? rnd_below(m, 3) * rnd_below(m, 1000)
						       : rnd(m) >> (16 + rnd_below(m, 48));
			tw_tick_t e = m->objs[id]->t.expires + d;
			op_mod(m, id, e < m->objs[id]->t.expires ? TW_TICK_MAX : e);
		} else if (op < 650) {
			op_del(m, id);
		} else if (op < 800) {
			/* advance: a step, a jump, to the next event, to an exact expiry */
			uint64_t k = rnd_below(m, 6);
			tw_tick_t t = m->now;
			if (m->cascade_heavy && k >= 3 && rnd_below(m, 2))
				k = 1;
			if (k == 0)
				t = m->now + rnd_below(m, 3);
			else if (k == 1) {
				uint64_t d = rnd_below(m, UINT64_C(1) << rnd_below(m, 24));
				t = m->now + d < m->now ? TW_TICK_MAX : m->now + d;
			}
			else if (k == 2) {
				uint64_t d = rnd(m) >> (20 + rnd_below(m, 44));
				t = m->now + d < m->now ? TW_TICK_MAX : m->now + d;
			} else if (k == 3) {
				t = twheel_next_expiry(m->w);
				if (t == TW_TICK_MAX)
					t = m->now;
			}
			else if (k == 4 && m->pending[id])
				t = m->exp[id];
			else
				t = m->now - rnd_below(m, 2); /* sometimes the past: -EINVAL */
			if (t < m->now && k != 5)
				t = m->now;
			/* rarely jump far: time that reaches the end stays there */
			if (t > m->now && t - m->now > (UINT64_C(1) << 44) && rnd_below(m, 64))
				t = m->now + rnd_below(m, UINT64_C(1) << 20);
			op_advance(m, t);
		} else if (op < 850) {
			op_chase(m);
		} else if (op < 950) {
			check_next_expiry(m);
		} else if (op < 990) {
			if (twheel_count(m->w) != m->count)
				fail(m, "count %zu, model %zu", twheel_count(m->w), m->count);
			bool p = tw_timer_pending(&m->objs[id]->t);
			if (p != m->pending[id])
				fail(m, "pending(%u) = %d, model %d", id, p, m->pending[id]);
		} else if (op < 995) {
			check_counts(m);
		} else {
			if (twheel_check(m->w, msg, sizeof(msg)))
				fail(m, "twheel_check: %s", msg);
		}
		if (!m->failed && i % 4096 == 0 && twheel_check(m->w, msg, sizeof(msg)))
			fail(m, "twheel_check: %s", msg);
		/* timers parked (in place) across operations: check often */
		if (!m->failed && m->nparked && rnd_below(m, 16 + m->count / 8) == 0 && twheel_check(m->w, msg, sizeof(msg)))
			fail(m, "twheel_check with %zu parked: %s", m->nparked, msg);
	}
	if (!m->failed && twheel_check(m->w, msg, sizeof(msg)))
		fail(m, "twheel_check at end: %s", msg);
	if (!m->failed) {
		struct twheel_stats st;
		twheel_get_stats(m->w, &st);
		res->cascaded = st.cascaded;
		size_t want = m->count;
		drain(m, false);
		if (!m->failed && (m->drained != want || twheel_count(m->w) != 0))
			fail(m, "drain handed back %u of %zu timers, count now %zu", m->drained, want,
			     twheel_count(m->w));
	}
	twheel_destroy(m->w);
	for (unsigned i = 0; i < ntimers; i++)
		free(m->objs[i]);
	free(m->objs);
	free(m->pending);
	free(m->deferred);
	free(m->to_hand);
	free(m->exp);
	free(m->later);
	free(m->ver);
	free(m->defer_list);
	free(m->parked);
	free(m->pval);
	free(m->park_pend);
	free(m->park_old);
	free(m->hinted);
	free(m->hint_min);
	free(m->heap);
	M = NULL;
	return m->failed ? -1 : 0;
}
