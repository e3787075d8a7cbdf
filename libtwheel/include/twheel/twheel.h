/* SPDX-License-Identifier: MIT */
/*
 * twheel/twheel.h - libtwheel: an exact, tickless, hierarchical cascading
 * timer wheel in the style of the Linux 2.6 tvec wheel, with 64-bit time and
 * per-level occupancy bitmaps.
 *
 * Time is an abstract 64-bit tick count (tw_tick_t); the caller decides what
 * a tick is (1 ms, 1 us, a frame...) and tells the wheel how far time has
 * gone with twheel_advance(). Timers are intrusive: the caller embeds a
 * struct tw_timer in its own object and gets back to that object in the
 * callback with tw_container_of(). The wheel never allocates after
 * twheel_create().
 *
 * Guarantees
 *   - Exact: a timer fires during the first twheel_advance() whose new time
 *     reaches its expiry, never earlier, never a tick later, for every
 *     expiry up to TW_TICK_MAX.
 *   - Order: within one advance, callbacks run in nondecreasing order of
 *     expiry (the order among equal expiries is unspecified).
 *   - Tickless: the cost of an advance depends on the timers fired and
 *     cascaded and the non-empty slots visited, not on the ticks elapsed.
 *
 * Threads: a wheel and the timers on it belong to one thread at a time;
 * nothing here locks. Functions that take a wheel may be called from any
 * thread that owns the wheel, including from inside the wheel's callbacks
 * unless stated otherwise. No function blocks.
 *
 * Errors: functions return 0 (or a count, or 0/1 for "was it pending") on
 * success and a negative errno value on failure. They never abort on bad
 * input, except that a build with -Ddebug_checks=true reports misuse that a
 * release build cannot detect (see twheel_set_misuse_handler()).
 */
#ifndef TWHEEL_TWHEEL_H
#define TWHEEL_TWHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <twheel/config.h>
#include <twheel/list.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A null pointer in the inline functions of our headers: nullptr in C++,
 * where a C++ program built with -Wzero-as-null-pointer-constant would
 * see NULL's 0 in them (when our headers are not system headers).
 */
#ifdef __cplusplus
#define TWHEEL__NULL nullptr
#else
#define TWHEEL__NULL NULL
#endif

#if defined(TWHEEL_BUILDING) && defined(__GNUC__)
#define TWHEEL_API __attribute__((visibility("default")))
#else
#define TWHEEL_API
#endif

/*
 * A program runs only with a library of its headers' layout. Built
 * against a release build's headers and run with a library built with
 * -Ddebug_checks=true (a libtwheel.so.1 found first, whose struct
 * tw_timer is larger), the library would write past every timer. So each file that includes this header
 * holds the address of twheel__layout_release (or, with
 * TWHEEL_DEBUG_CHECKS 1, twheel__layout_debug_checks), and the library
 * defines only its own: the other fails to link, or to load ("undefined
 * symbol: twheel__layout_debug_checks"), so such a file must be linked
 * with libtwheel. The check costs a pointer and a relocation a file. The
 * pointer is kept (retain) where the linker drops unused sections
 * (-Wl,--gc-sections with -fdata-sections), with GCC 11 or Clang 13 and
 * later; an older compiler loses the check there.
 */
#if TWHEEL_DEBUG_CHECKS
#define TWHEEL__LAYOUT twheel__layout_debug_checks
#else
#define TWHEEL__LAYOUT twheel__layout_release
#endif
TWHEEL_API extern const char TWHEEL__LAYOUT;
#if defined(__has_attribute)
#if __has_attribute(retain)
#define TWHEEL__RETAIN __attribute__((retain))
#endif
#endif
#ifndef TWHEEL__RETAIN
#define TWHEEL__RETAIN
#endif
#ifndef TWHEEL__ANY_DEBUG_CHECKS
__attribute__((used)) TWHEEL__RETAIN static const char *const twheel__layout = &TWHEEL__LAYOUT;
#endif

/* Absolute time, in ticks. */
typedef uint64_t tw_tick_t;
#define TW_TICK_MAX UINT64_MAX

/* Get the struct that embeds the member @ptr points at (kernel container_of). */
#define tw_container_of(ptr, type, member) tw_list_entry(ptr, type, member)

/*
 * A timer. Embed it in your own struct, initialise it once with
 * tw_timer_init(), then arm it with twheel_add() or twheel_mod().
 *
 * Public fields (read-only while pending):
 *   expires  the tick it is (or was last) armed for (while parked: the
 *            value twheel_park() was given).
 *   func     the callback, set by tw_timer_init().
 *   flags    free for the owner; the wheel never reads or writes it
 *            (tw_timer_init() sets it to 0).
 * Fields starting with an underscore are private to the wheel.
 *
 * A timer never passed to tw_timer_init() but all zero (a calloc'ed or
 * "= {0}" struct) is refused with -EINVAL by every function that takes
 * it, changing nothing, and tw_timer_pending() says false: such a bug
 * fails, not crashes (a -Ddebug_checks build reports it first, as any
 * timer never initialised: its default misuse handler aborts, see
 * twheel_set_misuse_handler()). Any other uninitialised content is
 * undefined (a -Ddebug_checks build reports it).
 *
 * Size: 40 bytes on LP64 in a release build (the kernel's timer_list is 40).
 */
struct tw_timer {
	tw_tick_t expires;
	uint32_t _idx;       /* where it is linked; TW__IDX_NONE when not pending */
	uint32_t flags;
	struct tw_list entry;
	void (*func)(struct tw_timer *t);
#if TWHEEL_DEBUG_CHECKS
	const struct twheel *_wheel; /* owner while pending */
	uint32_t _magic;             /* set by tw_timer_init() */
#endif
};

#define TW__IDX_NONE UINT32_MAX

/*
 * Initialise @t with callback @func (which may be NULL, but then the timer
 * cannot be armed). Leaves the timer not pending. Must not be called on a
 * pending timer: a -Ddebug_checks build reports it and, if the misuse
 * handler returns, leaves @t and its wheel untouched. O(1); any thread.
 */
TWHEEL_API void tw_timer_init(struct tw_timer *t, void (*func)(struct tw_timer *t));

/*
 * Returns true if @t is armed on a wheel and has not fired or been deleted;
 * false for NULL and for an all-zero @t (never initialised: see struct
 * tw_timer). Inside its own callback a timer is already not pending. O(1); the thread
 * that owns the timer's wheel.
 */
TWHEEL_API bool tw_timer_pending(const struct tw_timer *t);

/*
 * Returns the tick @t is (or was last) armed for; while @t is parked
 * (twheel_park(): a host's arm by delay, until its placement), the value
 * it was parked with instead (a host's timer: twheel_host_expires() gives
 * its tick). 0 if @t is NULL. O(1).
 */
static inline tw_tick_t tw_timer_expires(const struct tw_timer *t)
{
	return t ? t->expires : 0;
}

struct twheel;

/*
 * Create a wheel whose time starts at @now (any value, up to TW_TICK_MAX).
 * Returns the wheel, or NULL with errno set (ENOMEM). The only function that
 * allocates: one block of about 15.3 KiB. Any thread.
 */
TWHEEL_API struct twheel *twheel_create(tw_tick_t now);

/*
 * Destroy @w (NULL is a no-op). Pending timers are unlinked and left not
 * pending; none is fired (use twheel_drain() first to get them back).
 * From one of @w's callbacks it does nothing, in every build (the advance
 * still runs on @w): destroy it once twheel_advance() has returned.
 * A -Ddebug_checks build reports destroying a wheel with pending timers,
 * and destroying it from one of its callbacks. O(pending timers).
 */
TWHEEL_API void twheel_destroy(struct twheel *w);

/*
 * Arm @t to fire at tick @expires. An expiry at or before the wheel's time
 * is legal: the timer then fires in the next twheel_advance().
 * Returns 0, or
 *   -EINVAL  @w or @t is NULL, @t has no callback, or @t was never
 *            initialised (all zero: see struct tw_timer);
 *   -EBUSY   @t is already pending (use twheel_mod() to re-arm).
 * O(1); the wheel's thread, callbacks included (a timer armed from a
 * callback fires in a later advance, never in the current one).
 */
TWHEEL_API int twheel_add(struct twheel *w, struct tw_timer *t, tw_tick_t expires);

/*
 * Arm @t at @expires whether or not it is pending (kernel mod_timer()).
 * Re-arming a pending timer to the same expiry, to one in the same slot,
 * or (for a timer on a level above the first: more than 256 ticks away
 * when it was placed) to a later expiry only stores the expiry: the timer
 * moves when its slot's cascade comes, and fires exactly at @expires all
 * the same. Returns 1 if @t was pending, 0 if it was not, or
 *   -EINVAL  @w or @t is NULL, @t has no callback, or @t was never
 *            initialised (all zero: see struct tw_timer; nothing changed).
 * O(1); the wheel's thread, callbacks included (as for twheel_add(): from
 * a callback, a timer re-armed to an expiry at or before the advance's
 * target, even its own unchanged expiry, fires in a later advance).
 */
TWHEEL_API int twheel_mod(struct twheel *w, struct tw_timer *t, tw_tick_t expires);

/*
 * twheel_mod()'s fast path is inline, here, in a release build: a re-arm
 * that only stores the expiry (the common case, above) costs the caller no
 * call; a timer not pending goes to twheel_add(), which does then what
 * twheel_mod() does without its re-arm tests; everything else calls
 * twheel__mod(). It reads and writes what is
 * declared below, which is therefore ABI from TWHEEL_1.1 on, kept for every
 * 1.x release:
 *   - every struct twheel begins with a struct twheel__head (its fields keep
 *     their types, offsets and meaning);
 *   - a pending timer's _idx names its slot: 0..255 level 0, then 64 slots
 *     per level (TW__NSLOTS in all); anything else (the due list, the list
 *     being fired) is >= TW__NSLOTS; expires is its expiry; a timer not
 *     pending has _idx TW__IDX_NONE.
 * The inline path calls twheel__mod() (TWHEEL_1.1, the same function as
 * twheel_mod()), so the dynamic loader refuses to run such code on a 1.0
 * library, whose wheel has no such head. Define TWHEEL_NO_INLINE before
 * including this header to call the library for every re-arm; a
 * -Ddebug_checks build always does (it checks each call). Taking the
 * address of twheel_mod gives the library's function. twheel_mod(...) is
 * then a macro that calls a static inline function, which C forbids in an
 * inline function with external linkage (plain C99 "inline", not "static
 * inline"; GCC warns): call (twheel_mod)(...) there.
 */
struct twheel__head {
	tw_tick_t due_limit; /* a re-arm to this or earlier must move the timer */
	uint64_t mods_fast;  /* re-arms that only stored the expiry (twheel_stats) */
};

#define TW__NSLOTS 896u /* 256 + 10 levels of 64 */

/*
 * True if a re-arm of @t to @expires may only store the expiry because @t
 * is pending on a level above the first and @expires is later: the common
 * case (an idle timeout pushed back), the one the inline path takes. The
 * library's twheel_mod() also keeps a timer in place when the new expiry
 * lies in the same slot span, earlier or on level 0.
 */
static inline bool tw__mod_later(const struct twheel__head *h, const struct tw_timer *t,
				 tw_tick_t expires)
{
	return t->_idx - 256u < TW__NSLOTS - 256u && expires >= t->expires &&
	       expires > h->due_limit;
}

TWHEEL_API int twheel__mod(struct twheel *w, struct tw_timer *t, tw_tick_t expires);

#if !TWHEEL_DEBUG_CHECKS && !defined(TWHEEL_NO_INLINE) && !defined(TWHEEL__DEFINING_MOD)
static inline int twheel__mod_inline(struct twheel *w, struct tw_timer *t, tw_tick_t expires)
{
#ifdef __cplusplus
	struct twheel__head *h = static_cast<struct twheel__head *>(static_cast<void *>(w));
#else
	struct twheel__head *h = (struct twheel__head *)(void *)w;
#endif

	if (w && t && tw__mod_later(h, t, expires)) {
		t->expires = expires;
		h->mods_fast++;
		return 1;
	}
	if (t && t->_idx == TW__IDX_NONE)
		return twheel_add(w, t, expires);
	return twheel__mod(w, t, expires);
}
#define twheel_mod(w, t, expires) twheel__mod_inline(w, t, expires)
#endif

/*
 * Disarm @t. Returns 1 if it was pending, 0 if not (harmless on a timer
 * that was initialised but never armed, already fired or already
 * deleted), or
 *   -EINVAL  @w or @t is NULL, or @t was never initialised (all zero:
 *            see struct tw_timer; nothing changed).
 * A timer deleted from a callback before its turn does not fire.
 * O(1); the wheel's thread, callbacks included.
 */
TWHEEL_API int twheel_del(struct twheel *w, struct tw_timer *t);

/*
 * Advance the wheel's time to @now, running the callback of every pending
 * timer whose expiry is <= @now, in nondecreasing order of expiry; then the
 * wheel's time is @now. Returns the number of callbacks run, or
 *   -EINVAL  @w is NULL or @now is earlier than the wheel's time;
 *   -EBUSY   called from inside one of @w's own callbacks.
 * Callbacks run with their timer already not pending; they may add, modify
 * or delete any timer of @w (themselves included) and free their own
 * timer's memory. Timers they arm fire in a later advance.
 * Cost: O(levels) per tick that has work (a non-empty slot to fire or to
 * cascade) plus O(1) per timer fired or moved; idle ticks cost nothing.
 * The wheel's thread.
 */
TWHEEL_API long twheel_advance(struct twheel *w, tw_tick_t now);

/*
 * Returns TW_TICK_MAX when nothing is pending (or @w is NULL). Otherwise a
 * tick <= the earliest pending expiry at which an advance has work to do:
 * the earliest expiry itself, or a cascade tick before it. When a timer is
 * already due (armed at or before the wheel's time, or, from a callback,
 * waiting on the list of the tick being fired) the result is <= the
 * wheel's time: advance to twheel_now() to run it. That result is a bound
 * kept as timers are armed, not recomputed when they go: it may lie
 * before every due timer's expiry, and from a callback, once a timer it
 * armed for the running advance's span is cancelled or re-armed, it may
 * be <= the wheel's time with no timer due. (From a callback,
 * twheel_now() is the tick being fired; timers of later ticks that the
 * same advance will still run give their expiry, as any pending timer.)
 * Advancing repeatedly to the returned tick reaches the earliest timer in
 * at most TWHEEL_LEVELS + 1 advances, plus at most one for each pending
 * timer that twheel_mod() re-armed to a later expiry without moving it
 * (see there): such a timer waits where it was, and the advance to that
 * slot's cascade moves it. While a timer is parked (twheel_park()), the
 * result is at most the wheel's time. O(levels); the wheel's thread.
 */
TWHEEL_API tw_tick_t twheel_next_expiry(const struct twheel *w);

/*
 * Returns the wheel's time (0 if @w is NULL). Inside one of @w's callbacks
 * it is the tick being fired, which the running advance may still go past:
 * see twheel_target(). O(1); the wheel's thread.
 */
TWHEEL_API tw_tick_t twheel_now(const struct twheel *w);

/*
 * Returns the time @w will be at when no advance is running: inside one of
 * @w's callbacks, the target of the running twheel_advance() (every expiry
 * at or before it either fires in that advance or, armed from a callback,
 * waits for the next one); otherwise twheel_now(). A caller that maps a
 * real deadline onto a tick from a callback must pick a tick after this one
 * to be sure the timer cannot run before the next advance (twheel_rt_expiry()
 * does). 0 if @w is NULL. O(1); the wheel's thread.
 */
TWHEEL_API tw_tick_t twheel_target(const struct twheel *w);

/* Returns the number of pending timers (0 if @w is NULL). O(1). */
TWHEEL_API size_t twheel_count(const struct twheel *w);

/*
 * Unlink every pending timer and hand each to @fn exactly once (in no
 * particular order), so that a program shutting down loses nothing; the
 * timers are not pending when @fn sees them and @fn may free them. Timers
 * that @fn arms again stay pending. @fn may also act on a timer not handed
 * back yet (the other timer of its object): one it cancels, re-arms
 * (twheel_mod()) or parks is not handed back (cancelled, it is not
 * pending; re-armed or parked, it stays pending like any timer @fn arms);
 * twheel_add() of one fails with -EBUSY, and one moved (twheel_move()) is
 * handed back as its new self. @fn counts as one of @w's callbacks:
 * twheel_destroy() does nothing there and twheel_advance() returns
 * -EBUSY. No-op if @w or @fn is NULL.
 * Must not be called from one of @w's callbacks. O(pending timers).
 */
TWHEEL_API void twheel_drain(struct twheel *w,
			     void (*fn)(struct tw_timer *t, void *arg), void *arg);

/* ---- Parking: arm now, place later ---------------------------------------- */

/*
 * Park @t: make it pending without placing it by expiry, for a caller that
 * knows only later when it is due (<twheel/rt.h>'s arm by delay, placed
 * from one clock reading per loop iteration: twheel_rt_place()). @value is
 * the caller's (a delay, say); it is kept in @t's expires while @t is
 * parked. A parked timer is pending like any other: tw_timer_pending() is
 * true, twheel_count() counts it, twheel_del() cancels it (its value
 * stays in expires), twheel_mod()
 * re-arms it (placed at once), twheel_park() gives it a new value,
 * twheel_move() moves it (still parked), twheel_drain() hands it back
 * (its value in expires) and twheel_destroy() unlinks it. It never fires
 * while parked: the wheel does not know its expiry, so
 * twheel_next_expiry() reports work due at the wheel's time while any
 * timer is parked, and a loop must place the parked timers
 * (twheel_place(), or twheel_unpark() each and arm it) before it asks how
 * long it may sleep. twheel_inspect() counts none of them as timers, but
 * a slot that holds only timers parked in place (below) still counts in
 * its level's slots_used, and its cascade in next.
 * A @t pending on a slot more than 256 ticks away when it was placed is
 * parked in place, while the wheel has room for it (64 such timers
 * between two placements; more are parked as the others): it stays linked
 * in its slot, so that twheel_place() usually only stores its new expiry,
 * as twheel_mod() does, and parking it touches no other timer. Any other
 * @t (one not pending, due, on the first level's slots, or beyond that
 * room) goes on the parked list, off its slot.
 * Returns 1 if @t was pending (parked or not), 0 if not, or
 *   -EINVAL  @w or @t is NULL, @t is not pending and has no callback, or
 *            @t was never initialised (all zero: see struct tw_timer).
 * O(1); the wheel's thread, callbacks included (a timer parked in place
 * whose slot an advance cascades before it is placed moves to the parked
 * list: it does not fire). (TWHEEL_1.2)
 */
TWHEEL_API int twheel_park(struct twheel *w, struct tw_timer *t, uint64_t value);

/*
 * Park @t as twheel_park() does, with a guess of the tick it will be
 * placed at, @hint. A @t that twheel_park() would put on the parked list
 * (not pending, say) is linked at once, while the wheel has room (the 64
 * entries above), in the slot an expiry of @hint belongs in, if that is
 * not on the first level (more than 256 ticks away) and @hint is after
 * the wheel's time (from a callback: after twheel_target(), the running
 * advance's target); it is then parked in place, as if it had been armed
 * at @hint, and twheel_place() re-arms it from @hint by twheel_mod()'s
 * rule: storing the expiry alone when that is at or after @hint. So a
 * hint at or a little before the placed expiry (the delay from the last
 * clock reading, rounded down) makes the placement touch the timer
 * alone; one before it by more than its slot's span waits in an earlier
 * slot and is moved by that slot's cascade (an extra move, never early);
 * one after it is moved at the placement. Any @hint is correct; one at or
 * before the wheel's time (or that target) is no hint. Everything else (returns, errors,
 * what a parked timer may do) is twheel_park()'s. O(1); the wheel's
 * thread, callbacks included. (TWHEEL_1.3)
 */
TWHEEL_API int twheel_park_hint(struct twheel *w, struct tw_timer *t, uint64_t value,
				tw_tick_t hint);

/*
 * Take one parked timer off @w and return it, not pending, its value in
 * its expires field (arm it at once: twheel_add()). Timers come back in no
 * particular order. NULL when no timer is parked or @w is NULL. O(1) (amortised over
 * the timers parked since the last placement); the wheel's thread,
 * callbacks included. (TWHEEL_1.2)
 */
TWHEEL_API struct tw_timer *twheel_unpark(struct twheel *w);

/*
 * Place every parked timer of @w: arm each at the tick @expiry(its value,
 * @arg) returns, as twheel_mod() would, so that one parked in place
 * usually only stores its new expiry (see twheel_park()). Placing from a
 * callback follows twheel_mod()'s rule: an expiry at or before the
 * advance's target fires in a later advance. @expiry must not change @w
 * (it may read it: twheel_target()). Each placement counts as an arm in
 * twheel_get_stats() (adds). Returns the number of timers placed, or
 *   -EINVAL  @w or @expiry is NULL.
 * O(1) per timer placed, plus O(64) for the park table; the wheel's
 * thread, callbacks included. (TWHEEL_1.2)
 */
TWHEEL_API long twheel_place(struct twheel *w, tw_tick_t (*expiry)(uint64_t value, void *arg),
			     void *arg);

/*
 * Not API: twheel-uring's placement, twheel_place() with its rule built
 * in (no call per timer). The value of every parked timer must be the
 * address of a uint64_t deadline counted from @base_ns (the reading plus
 * a delay, UINT64_MAX if that saturated). Each is re-counted from
 * @ref_ns, a reading taken after every park: @ref_ns + (deadline -
 * @base_ns), saturating (UINT64_MAX stays), written back, and the timer
 * placed at twheel_rt_expiry()'s tick for it with ticks of @tick_ns ns
 * and @after as the wheel's target. Returns the number placed, or
 * -EINVAL (@w NULL, @tick_ns 0). The wheel's thread. (TWHEEL_1.3)
 */
TWHEEL_API long twheel__place_deadlines(struct twheel *w, uint64_t base_ns, uint64_t ref_ns,
					uint64_t tick_ns, tw_tick_t after);

/*
 * Not API: the catch-up of the host driver and twheel-uring. Move @w's
 * time on to @target where an advance to it would process nothing
 * (nothing due, no timer's expiry and no cascade at or before @target);
 * parked timers stay parked. Returns whether it moved: false also for
 * @w NULL, inside an advance, or @target not after twheel_now(). O(1)
 * (the next tick with work is cached); the wheel's thread. (TWHEEL_1.3)
 */
TWHEEL_API bool twheel__catch_up(struct twheel *w, tw_tick_t target);

/*
 * Not API: twheel-uring's catch-up. twheel__catch_up(), and through the
 * cascades on the way: each slot due to cascade at or before @target is
 * cascaded as twheel_advance() would, and the wheel's time stops just
 * before the first tick with a timer's expiry (@target if none). Fires
 * nothing. Returns whether the time moved; false as twheel__catch_up()
 * (also with a timer due). O(1) plus the cascades' cost, which an advance
 * to @target would pay; the wheel's thread. (TWHEEL_1.3)
 */
TWHEEL_API bool twheel__catch_up_cascades(struct twheel *w, tw_tick_t target);

/* ---- Moving a timer ------------------------------------------------------- */

/*
 * Move the timer at @src to the address @dst, for owners that relocate
 * their objects (a C array of timers that grows, a C++ handle that is
 * moved). @dst takes @src's expiry, callback and flags and, if @src is
 * pending on @w, its place on @w: it stays pending at the same expiry, in
 * the same position among equal expiries, and fires once, as @dst. @src is
 * left not pending (its other fields unchanged). @dst must have been
 * initialised with tw_timer_init() and must not be pending; its previous
 * contents are overwritten. @w may be NULL when @src is not pending.
 * @dst == @src changes nothing (with the errors below all the same).
 * Returns 1 if @src was pending, 0 if not, or
 *   -EINVAL  @dst or @src is NULL, @src is pending and @w is NULL, or
 *            either was never initialised (all zero: see struct tw_timer);
 *   -EBUSY   @dst is pending (and is not @src).
 * O(1); the wheel's thread, callbacks included: a timer moved while the
 * advance is firing its slot still fires in that advance, as @dst.
 */
TWHEEL_API int twheel_move(struct twheel *w, struct tw_timer *dst, struct tw_timer *src);

/* ---- Inspection, statistics and version ---------------------------------- */

/*
 * The wheel's shape: a first level of 2^8 = 256 one-tick slots, then levels
 * of 2^6 = 64 slots, 11 levels in all, which cover the whole 64-bit range.
 */
#define TWHEEL_LEVEL0_BITS 8
#define TWHEEL_LEVEL_BITS 6
#define TWHEEL_LEVELS 11

/* Counters since twheel_create(). */
struct twheel_stats {
	uint64_t adds;      /* timers armed (twheel_add, twheel_mod of a non-pending timer,
			     * twheel_place of a parked one) */
	uint64_t mods;      /* twheel_mod calls on a pending timer */
	uint64_t mods_fast; /* ...of which only stored the new expiry */
	uint64_t dels;      /* twheel_del calls that disarmed a pending timer */
	uint64_t fires;     /* callbacks run (or running: from a callback, its own counts) */
	uint64_t cascades;  /* higher-level slots emptied (their timers re-inserted by expiry) */
	uint64_t cascaded;  /* timers moved by those cascades (each time one is moved) */
	uint64_t advances;  /* twheel_advance calls that succeeded */
};

/* Copy @w's counters into @st. -EINVAL if either is NULL. O(1). */
TWHEEL_API int twheel_get_stats(const struct twheel *w, struct twheel_stats *st);

/* What one level of the wheel holds (see twheel_inspect()). */
struct twheel_level_info {
	unsigned slots;          /* slots on this level (256 or 64; 4 on the last) */
	unsigned slots_used;     /* non-empty slots */
	size_t timers;           /* timers placed on this level (parked ones are not) */
	tw_tick_t span;          /* ticks covered by one slot (2^63 max is exact) */
	tw_tick_t next;          /* next tick with work on this level, TW_TICK_MAX if empty */
};

/*
 * Describe @w's shape for inspection tools: fills @info[0..TWHEEL_LEVELS-1]
 * (@n must be >= TWHEEL_LEVELS) and stores in *@due the number of timers
 * waiting on the due list (armed at or before the wheel's time); @due may
 * be NULL. Returns 0, or -EINVAL (NULL @w or @info, @n too small).
 * O(pending timers); the wheel's thread.
 */
TWHEEL_API int twheel_inspect(const struct twheel *w, struct twheel_level_info *info, size_t n,
			      size_t *due);

/*
 * Validate every invariant of @w: each list well formed, each bitmap bit set
 * exactly when its slot is non-empty, each timer in the slot its expiry and
 * the wheel's time dictate, the count right. Returns 0 if all hold, or
 * -EINVAL (@w NULL) or -EUCLEAN (a violation, the first of which is
 * described in @msg, up to @len bytes, when @msg is not NULL).
 * O(pending timers); the wheel's thread, not from a callback.
 */
TWHEEL_API int twheel_check(const struct twheel *w, char *msg, size_t len);

/* Returns the library's version string, e.g. "1.0.0". Any thread. */
TWHEEL_API const char *twheel_version(void);

/* Returns the version as MAJOR * 10000 + MINOR * 100 + PATCH. Any thread. */
TWHEEL_API unsigned twheel_version_number(void);

/*
 * Debug builds (-Ddebug_checks=true) detect misuse that a release build
 * cannot: a timer that was never initialised, a timer pending on another
 * wheel, destroying a wheel that still has pending timers, re-initialising
 * a pending timer, destroying or draining a wheel from one of its
 * callbacks, arming a timer (twheel_add, twheel_mod, twheel_park,
 * twheel_park_hint) on a host's wheel (<twheel/host.h>) outside its run
 * instead of through the host. Each is reported to the handler, whose default prints
 * @what to stderr and aborts. If a handler returns, the call that detected
 * the misuse returns -EINVAL without touching the wheel (a destroy with
 * pending timers goes on; a destroy or drain from a callback does nothing).
 * Passing NULL restores the default. Returns the previous handler.
 * In a release build the handler is stored but never called.
 * Not thread-safe: set it before using wheels.
 */
typedef void (*twheel_misuse_fn)(const char *what);
TWHEEL_API twheel_misuse_fn twheel_set_misuse_handler(twheel_misuse_fn fn);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_TWHEEL_H */
