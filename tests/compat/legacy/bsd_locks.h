/*
 * bsd_locks.h - the locks of FreeBSD's <sys/mutex.h>, <sys/rwlock.h> and
 * <sys/rmlock.h> as a port of FreeBSD code to user space has them (here on
 * POSIX threads, with the checks an INVARIANTS kernel makes: a failed
 * assertion or a misuse aborts, as a panic would), and the lines that
 * tell <twheel/compat/callout.h> how to take and release them, so that
 * its callout_init_mtx(), callout_init_rw() and callout_init_rm() exist.
 * Included before that header.
 */
#ifndef BSD_LOCKS_H
#define BSD_LOCKS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define	MA_OWNED	0x01
#define	MA_NOTOWNED	0x08

struct mtx {
	pthread_mutex_t	mtx_lock;
	pthread_t	mtx_owner;
	int		mtx_held;	/* written by the holder */
};

static inline void
lock_panic(const char *what)
{
	fprintf(stderr, "panic: %s\n", what);
	abort();
}

static inline void
mtx_init(struct mtx *m)
{
	pthread_mutexattr_t a;

	if (pthread_mutexattr_init(&a) != 0 ||
	    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK) != 0 ||
	    pthread_mutex_init(&m->mtx_lock, &a) != 0)
		lock_panic("mtx_init");
	pthread_mutexattr_destroy(&a);
	m->mtx_held = 0;
}

static inline void
mtx_destroy(struct mtx *m)
{
	if (pthread_mutex_destroy(&m->mtx_lock) != 0)
		lock_panic("mtx_destroy: held");
}

static inline void
mtx_lock(struct mtx *m)
{
	if (pthread_mutex_lock(&m->mtx_lock) != 0)
		lock_panic("mtx_lock: recursed on non-recursive mutex");
	m->mtx_owner = pthread_self();
	m->mtx_held = 1;
}

static inline void
mtx_unlock(struct mtx *m)
{
	m->mtx_held = 0;
	if (pthread_mutex_unlock(&m->mtx_lock) != 0)
		lock_panic("mtx_unlock: not owned");
}

static inline int
mtx_owned(const struct mtx *m)
{
	return (m->mtx_held && pthread_equal(m->mtx_owner, pthread_self()));
}

static inline void
mtx_assert(const struct mtx *m, int what)
{
	if (what == MA_OWNED && !mtx_owned(m))
		lock_panic("mutex not owned");
	if (what == MA_NOTOWNED && mtx_owned(m))
		lock_panic("mutex owned");
}

#define	RA_WLOCKED	0x04

struct rwlock {
	pthread_rwlock_t rw_lock;
	pthread_t	rw_owner;
	int		rw_wlocked;	/* written by the writer */
};

static inline void
rw_init(struct rwlock *rw)
{
	if (pthread_rwlock_init(&rw->rw_lock, NULL) != 0)
		lock_panic("rw_init");
	rw->rw_wlocked = 0;
}

static inline void
rw_destroy(struct rwlock *rw)
{
	if (pthread_rwlock_destroy(&rw->rw_lock) != 0)
		lock_panic("rw_destroy: held");
}

static inline int
rw_wowned(const struct rwlock *rw)
{
	return (rw->rw_wlocked && pthread_equal(rw->rw_owner, pthread_self()));
}

static inline void
rw_assert(const struct rwlock *rw, int what)
{
	if (what == RA_WLOCKED && !rw_wowned(rw))
		lock_panic("rw lock not exclusively locked");
}

static inline void
rw_rlock(struct rwlock *rw)
{
	if (pthread_rwlock_rdlock(&rw->rw_lock) != 0)
		lock_panic("rw_rlock");
}

static inline void
rw_wlock(struct rwlock *rw)
{
	if (pthread_rwlock_wrlock(&rw->rw_lock) != 0)
		lock_panic("rw_wlock");
	rw->rw_owner = pthread_self();
	rw->rw_wlocked = 1;
}

static inline void
rw_unlock(struct rwlock *rw)
{
	if (rw_wowned(rw))
		rw->rw_wlocked = 0;
	if (pthread_rwlock_unlock(&rw->rw_lock) != 0)
		lock_panic("rw_unlock");
}

#define	rw_runlock(rw)	rw_unlock(rw)
#define	rw_wunlock(rw)	rw_unlock(rw)

/* A read-mostly lock: a reader/writer lock with FreeBSD's tracker. */
struct rmlock {
	struct rwlock	rm_rw;
};

struct rm_priotracker {
	struct rmlock	*rmp_rmlock;
};

static inline void
rm_rlock(struct rmlock *rm, struct rm_priotracker *tracker)
{
	tracker->rmp_rmlock = rm;
	rw_rlock(&rm->rm_rw);
}

static inline void
rm_runlock(struct rmlock *rm, struct rm_priotracker *tracker)
{
	if (tracker->rmp_rmlock != rm)
		lock_panic("rm_runlock: wrong tracker");
	rw_unlock(&rm->rm_rw);
}

#define	rm_wlock(rm)	rw_wlock(&(rm)->rm_rw)
#define	rm_wunlock(rm)	rw_unlock(&(rm)->rm_rw)

/* For <twheel/compat/callout.h>: how its callouts take these locks. */
#define	TWHEEL_CALLOUT_MTX_LOCK(m)		mtx_lock(m)
#define	TWHEEL_CALLOUT_MTX_UNLOCK(m)		mtx_unlock(m)
#define	TWHEEL_CALLOUT_RW_WLOCK(rw)		rw_wlock(rw)
#define	TWHEEL_CALLOUT_RW_WUNLOCK(rw)		rw_wunlock(rw)
#define	TWHEEL_CALLOUT_RW_RLOCK(rw)		rw_rlock(rw)
#define	TWHEEL_CALLOUT_RW_RUNLOCK(rw)		rw_runlock(rw)
#define	TWHEEL_CALLOUT_RM_WLOCK(rm)		rm_wlock(rm)
#define	TWHEEL_CALLOUT_RM_WUNLOCK(rm)		rm_wunlock(rm)
#define	TWHEEL_CALLOUT_RM_RLOCK(rm, tr)		rm_rlock(rm, tr)
#define	TWHEEL_CALLOUT_RM_RUNLOCK(rm, tr)	rm_runlock(rm, tr)

#endif
