/* SPDX-License-Identifier: MIT */
/*
 * create.c - creating a twheel-uring loop, probing the kernel, explaining
 * refusals, destroying it, and reading its state.
 *
 * Creation asks for IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN |
 * TASKRUN_FLAG | R_DISABLED (6.1+): completions are then posted only when
 * the loop thread asks, in its own context, and R_DISABLED lets the thread
 * that first runs the loop, not the creating one, become the issuer. A
 * kernel that rejects the flags (EINVAL) gets a plain ring (and one that
 * rejects IORING_SETUP_CQSIZE too, before 5.5, a ring without it). The one
 * feature the loop cannot do without is IORING_FEAT_EXT_ARG (5.11): every
 * wait passes its timeout as an argument. When io_uring is refused, the
 * message names the cause read from /proc (system-wide disable, group
 * restriction, the process's seccomp filter).
 */
#include <sys/epoll.h>

#include "loop_impl.h"

void twheel_loop_config_init(struct twheel_loop_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->tick_ns = DEFAULT_TICK;
}

/* Read a small integer from a /proc file; -1 if unreadable. */
static long read_proc_long(const char *path, const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtol(line, NULL, 10);
			break;
		}
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* One line naming why io_uring_setup() failed with @err. */
static void explain(char *msg, size_t len, int err)
{
	long dis, sec;

	if (!msg || !len)
		return;
	switch (-err) {
	case ENOSYS:
		snprintf(msg, len, "io_uring_setup: ENOSYS: this kernel has no io_uring "
			 "(CONFIG_IO_URING=n or older than 5.1), or a seccomp filter "
			 "hides it");
		return;
	case EPERM:
		dis = read_proc_long("/proc/sys/kernel/io_uring_disabled", NULL);
		sec = read_proc_long("/proc/self/status", "Seccomp:");
		if (dis == 2)
			snprintf(msg, len, "io_uring_setup: EPERM: io_uring is disabled "
				 "system-wide (sysctl kernel.io_uring_disabled=2)");
		else if (dis == 1)
			snprintf(msg, len, "io_uring_setup: EPERM: io_uring is restricted "
				 "to the group kernel.io_uring_group (sysctl "
				 "kernel.io_uring_disabled=1)");
		else if (sec == 2)
			snprintf(msg, len, "io_uring_setup: EPERM: refused by the seccomp "
				 "filter of this process (a container's default profile "
				 "blocks io_uring_setup; allow it or run unconfined)");
		else
			snprintf(msg, len, "io_uring_setup: EPERM: refused by the kernel "
				 "(an LSM policy?)");
		return;
	case ENOMEM:
		snprintf(msg, len, "io_uring_setup: ENOMEM: cannot allocate the rings "
			 "(RLIMIT_MEMLOCK on kernels before 5.12, or memory)");
		return;
	case EMFILE:
	case ENFILE:
		snprintf(msg, len, "io_uring_setup: %s: out of file descriptors",
			 err == -EMFILE ? "EMFILE" : "ENFILE");
		return;
	default:
		snprintf(msg, len, "io_uring_setup: %s", strerror(-err));
	}
}

/*
 * Set up the ring (io_uring mode). Returns 0, or the negative errno of
 * io_uring_setup() (-EOPNOTSUPP: the kernel lacks EXT_ARG) with @msg set.
 */
/*
 * io_uring_queue_init_params() with @flags and a CQ ring of 2 * @entries
 * but at least CQ_MIN_ENTRIES (IORING_SETUP_CQSIZE). The loop itself has
 * one request in flight (the eventfd read; waits pass their timeout as an
 * argument), so only a burst of the user's completions can fill the CQ:
 * the kernel then keeps the excess on its overflow list (IORING_FEAT_NODROP,
 * 5.5) until the loop flushes it (wait.c), but a multishot request that
 * cannot post a CQE ends. The loop reaps CQE_BATCH completions per
 * iteration; the floor leaves room for a few iterations' worth when
 * cfg.entries is small.
 */
static int ring_setup(struct twheel_loop *l, unsigned entries, unsigned flags,
		      struct io_uring_params *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags | IORING_SETUP_CQSIZE;
	p->cq_entries = entries > CQ_MIN_ENTRIES / 2 ? 2 * entries : CQ_MIN_ENTRIES;
	return io_uring_queue_init_params(entries, &l->ring, p);
}

/*
 * I/O deadlines are linked timeouts (deadline.c) when the kernel has
 * IORING_OP_LINK_TIMEOUT (probed: io_uring_get_probe_ring()), the loop
 * clock is CLOCK_MONOTONIC (the kernel's absolute timeout reads that
 * clock) and the config does not say TW_LOOP_NO_LINK_TIMEOUT.
 */
static void link_timeout_probe(struct twheel_loop *l, const struct twheel_loop_config *cfg)
{
	struct io_uring_probe *probe;

	if ((cfg->flags & TW_LOOP_NO_LINK_TIMEOUT) ||
	    (cfg->clock && cfg->clock != twheel_rt_clock_monotonic))
		return;
	probe = io_uring_get_probe_ring(&l->ring);
	if (!probe)
		return;
	if (io_uring_opcode_supported(probe, IORING_OP_LINK_TIMEOUT))
		l->features |= TW_LOOP_FEAT_LINK_TIMEOUT;
	io_uring_free_probe(probe);
}

/* The answer to a kernel without IORING_FEAT_EXT_ARG (before 5.11). */
static int no_ext_arg(char *msg, size_t len)
{
	if (msg && len)
		snprintf(msg, len, "io_uring: the kernel lacks IORING_FEAT_EXT_ARG "
			 "(timed waits): Linux 5.11 or later is needed");
	return -EOPNOTSUPP;
}

/*
 * Whether the kernel's rings have IORING_FEAT_EXT_ARG, asked of the
 * smallest ring (a few pages): 1 or 0, or -1 if even that is refused.
 * For a ring refused -ENOMEM: before 5.12 the rings count against
 * RLIMIT_MEMLOCK, and a kernel that old may lack EXT_ARG as well, which
 * no larger limit would cure.
 */
static int kernel_has_ext_arg(void)
{
	struct io_uring_params p;
	struct io_uring ring;

	memset(&p, 0, sizeof(p));
	if (io_uring_queue_init_params(1, &ring, &p) < 0)
		return -1;
	io_uring_queue_exit(&ring);
	return (p.features & IORING_FEAT_EXT_ARG) != 0;
}

static int ring_init(struct twheel_loop *l, const struct twheel_loop_config *cfg, char *msg,
		     size_t len)
{
	unsigned entries = cfg->entries ? cfg->entries : DEFAULT_ENTRIES;
	struct io_uring_params p;
	bool defer = false; /* the ring has SINGLE_ISSUER|DEFER_TASKRUN */
	int ret = -EINVAL;

	/*
	 * SINGLE_ISSUER|DEFER_TASKRUN (6.1+): completions are posted only when
	 * the loop thread asks, in its own context. R_DISABLED lets the thread
	 * that first runs the loop, not the creating one, become the issuer.
	 * Older kernels reject the flags with EINVAL: retry without.
	 */
	if (!(cfg->flags & TW_LOOP_NO_DEFER_TASKRUN)) {
		ret = ring_setup(l, entries,
				 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
					 IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_R_DISABLED,
				 &p);
		defer = ret == 0;
	}
	if (ret == -EINVAL)
		ret = ring_setup(l, entries, 0, &p);
	if (ret == -EINVAL) {
		/* Before 5.5 the kernel knows no IORING_SETUP_CQSIZE either: a
		 * ring without it tells such a kernel (it has no EXT_ARG: below)
		 * from a size too large (EINVAL again). */
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(entries, &l->ring, &p);
	}
	if (ret == -ENOMEM && kernel_has_ext_arg() == 0)
		return no_ext_arg(msg, len);
	if (ret < 0) {
		explain(msg, len, ret);
		return ret;
	}
	/* Waits carry their timeout as an argument (IORING_FEAT_EXT_ARG, 5.11):
	 * the one feature the io_uring mode cannot do without. */
	if (!(p.features & IORING_FEAT_EXT_ARG)) {
		io_uring_queue_exit(&l->ring);
		return no_ext_arg(msg, len);
	}
	/* what the ring has is the loop's only once it is the loop's ring: a
	 * refused one leaves nothing behind for fallback mode to trip on */
	l->features |= TW_LOOP_FEAT_EXT_ARG | (defer ? TW_LOOP_FEAT_DEFER_TASKRUN : 0);
	l->r_disabled = defer;
	l->taskrun_flag = defer;
	l->held_flags = IORING_SQ_CQ_OVERFLOW | (defer ? IORING_SQ_TASKRUN : 0);
	link_timeout_probe(l, cfg);
	return 0;
}

/* Set up fallback mode: one epoll set holding the eventfd. */
static int fallback_init(struct twheel_loop *l, char *msg, size_t len)
{
	struct epoll_event ev = { .events = EPOLLIN };

	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->efd, &ev) < 0) {
		int ret = -errno;

		if (msg && len)
			snprintf(msg, len, "epoll: %s", strerror(-ret));
		if (l->epfd >= 0)
			close(l->epfd);
		l->epfd = -1;
		return ret;
	}
	l->features = TW_LOOP_FEAT_FALLBACK;
	l->efd_armed = true; /* the eventfd is always in the epoll set */
	return 0;
}

/*
 * Copy @ucfg (the defaults if NULL) into @cfg, a zero tick meaning the
 * default, and check it. Returns 0, or -EINVAL with @msg set: a tick out
 * of 1 us .. 1 s, an unknown flag, or both TW_LOOP_NO_URING and
 * TW_LOOP_URING_ONLY.
 */
static int config_read(struct twheel_loop_config *cfg, const struct twheel_loop_config *ucfg,
		       char *msg, size_t len)
{
	if (ucfg)
		*cfg = *ucfg;
	else
		twheel_loop_config_init(cfg);
	if (!cfg->tick_ns)
		cfg->tick_ns = DEFAULT_TICK;
	if (cfg->tick_ns < 1000 || cfg->tick_ns > 1000000000ull) {
		if (msg && len)
			snprintf(msg, len, "twheel_loop_create: tick must be 1 us .. 1 s");
		return -EINVAL;
	}
	if ((cfg->flags & ~CONFIG_FLAGS) ||
	    (cfg->flags & (TW_LOOP_NO_URING | TW_LOOP_URING_ONLY)) ==
		    (TW_LOOP_NO_URING | TW_LOOP_URING_ONLY)) {
		if (msg && len)
			snprintf(msg, len, "twheel_loop_create: unknown or contradictory flags");
		return -EINVAL;
	}
	return 0;
}

/*
 * A zeroed loop on its own cache lines, holding what @cfg asks for, its
 * inbox empty and no descriptor open yet (epfd -1; efd still to open).
 * NULL if out of memory.
 */
static struct twheel_loop *loop_alloc(const struct twheel_loop_config *cfg)
{
	struct twheel_loop *l;

	l = aligned_alloc(CACHELINE, (sizeof(*l) + CACHELINE - 1) & ~(size_t)(CACHELINE - 1));
	if (!l)
		return NULL;
	memset(l, 0, sizeof(*l));
	twheel_rt_init(&l->rt, cfg->tick_ns, cfg->clock, cfg->clock_arg);
	l->pid = getpid();
	l->executor = cfg->executor;
	l->executor_arg = cfg->executor_arg;
	l->release = cfg->release;
	l->release_arg = cfg->release_arg;
	l->max_pending = cfg->max_pending;
	l->batch = cfg->batch ? cfg->batch : DEFAULT_BATCH;
	l->q_head = &l->stub;
	l->q_tail = &l->stub;
	l->efd_io.func = twl_efd_done;
	l->epfd = -1;
	return l;
}

/* Open the loop's eventfd. Returns 0, or the negative errno with @msg set. */
static int efd_open(struct twheel_loop *l, char *msg, size_t len)
{
	int ret;

	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0) {
		ret = -errno;
		if (msg && len)
			snprintf(msg, len, "eventfd: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * io_uring unless told not to; where it is refused (a seccomp profile,
 * kernel.io_uring_disabled, no io_uring at all) or too old, epoll runs
 * the timer half, unless the caller needs io_uring. Returns 0 with @msg
 * naming the fallback if one was taken, or the negative errno of the
 * last backend tried with @msg set by it; nothing is left open then.
 */
static int backend_init(struct twheel_loop *l, const struct twheel_loop_config *cfg, char *msg,
			size_t len)
{
	int ret = -EPERM;

	if (!(cfg->flags & TW_LOOP_NO_URING))
		ret = ring_init(l, cfg, msg, len);
	if (ret && !(cfg->flags & TW_LOOP_URING_ONLY) &&
	    (ret == -EPERM || ret == -ENOSYS || ret == -EOPNOTSUPP)) {
		char why[192];

		snprintf(why, sizeof(why), "%s", msg && len ? msg : "");
		ret = fallback_init(l, msg, len);
		if (!ret && msg && len)
			snprintf(msg, len, "running on epoll without io_uring%s%s",
				 why[0] ? ": " : " (TW_LOOP_NO_URING)", why);
	}
	return ret;
}

/*
 * Read the clock and create the two wheels at its tick. Returns 0, or
 * -ENOMEM with whichever wheel was created left for the caller to destroy.
 */
static int wheels_create(struct twheel_loop *l)
{
	tw_tick_t now;

	l->now = loop_clock(l);
	now = twheel_rt_floor(&l->rt, l->now);
	l->tick = now;
	l->wheel = twheel_create(now);
	l->dwheel = twheel_create(now);
	if (!l->wheel || !l->dwheel)
		return -ENOMEM;
	return 0;
}

int twheel_loop_create(struct twheel_loop **loopp, const struct twheel_loop_config *ucfg,
		       char *msg, size_t len)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	int ret;

	if (msg && len)
		msg[0] = '\0';
	if (!loopp)
		return -EINVAL;
	*loopp = NULL;
	ret = config_read(&cfg, ucfg, msg, len);
	if (ret)
		return ret;
	l = loop_alloc(&cfg);
	if (!l)
		return -ENOMEM;
	ret = efd_open(l, msg, len);
	if (ret)
		goto err_free;
	ret = backend_init(l, &cfg, msg, len);
	if (ret)
		goto err_efd;
	ret = wheels_create(l);
	if (ret)
		goto err_wheels;
	*loopp = l;
	return 0;

err_wheels:
	twheel_destroy(l->wheel);
	twheel_destroy(l->dwheel);
	if (loop_fallback(l))
		close(l->epfd);
	else
		io_uring_queue_exit(&l->ring);
err_efd:
	close(l->efd);
err_free:
	free(l);
	return ret;
}

void twheel_loop_destroy(struct twheel_loop *l,
			 void (*timer_fn)(struct tw_loop_timer *t, void *arg),
			 void (*work_fn)(struct tw_loop_work *w, void *arg), void *arg)
{
	if (!l || l->in_callback)
		return; /* from one of its own callbacks: the loop is in use */
	/* stopped first: what @timer_fn or a work item arms now is refused
	 * (-ESHUTDOWN), not left owned by a loop about to be freed */
	twheel_loop_stop(l);
	/* the calls of other threads still under way: the loop may have run
	 * what they posted, or seen their stop, before they returned. In a
	 * child made by fork() there are none: it has only the forking thread,
	 * and the count (like the inbox) is as the parent's threads left it. */
	if (getpid() == l->pid) {
		for (unsigned i = 0; i <= CALLER_SLOTS; i++)
			while (__atomic_load_n(&l->callers[i].n, __ATOMIC_ACQUIRE))
				sched_yield();
	}
	twheel_loop_drain(l, timer_fn, work_fn, arg);
	twl_compat_detach(l); /* still bound: the binding must not reach @l */
	if (loop_fallback(l))
		close(l->epfd);
	else
		io_uring_queue_exit(&l->ring);
	close(l->efd);
	twheel_destroy(l->wheel);
	twheel_destroy(l->dwheel);
	free(l->ms_tab);
	free(l);
}

/* ---- Inspection ------------------------------------------------------------ */

uint64_t twheel_loop_now(const struct twheel_loop *l)
{
	return l ? l->now : 0;
}

uint64_t twheel_loop_clock(const struct twheel_loop *l)
{
	return l ? loop_clock(l) : 0;
}

uint64_t twheel_loop_tick(const struct twheel_loop *l)
{
	return l ? l->rt.tick_ns : 0;
}

unsigned twheel_loop_features(const struct twheel_loop *l)
{
	return l ? l->features : 0;
}

/*
 * twheel_loop_get_stats() has one symbol version per size of struct
 * twheel_loop_stats, which only grows at its end: a program built against
 * an older header calls the version it was linked with, which writes no
 * more than the struct it knows (as glibc versions its symbols).
 */
static int get_stats(const struct twheel_loop *l, void *st, size_t size)
{
	struct twheel_loop_stats now;

	if (!l || !st)
		return -EINVAL;
	now = l->st;
	if (!loop_fallback(l))
		now.cq_dropped = IO_URING_READ_ONCE(*l->ring.cq.koverflow);
	memcpy(st, &now, size);
	return 0;
}

/*
 * Two versions of one name. GCC 10 and later take the symver attribute,
 * which survives link-time optimisation (a top-level .symver directive
 * does not: an LTO build failed to link); clang and older GCC take the
 * directive.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define SYMVER_ATTR(ver) __attribute__((symver(ver)))
#define SYMVER_ASM(fn, ver)
#else
#define SYMVER_ATTR(ver)
#define SYMVER_ASM(fn, ver) __asm__(".symver " #fn ", " ver);
#endif

/* TWHEEL_URING_1.0: the counters up to misfires. */
TWHEEL_LOOP_API int twl_get_stats_1_0(const struct twheel_loop *l, void *st)
	SYMVER_ATTR("twheel_loop_get_stats@TWHEEL_URING_1.0");
int twl_get_stats_1_0(const struct twheel_loop *l, void *st)
{
	return get_stats(l, st, offsetof(struct twheel_loop_stats, multishot_ends));
}
SYMVER_ASM(twl_get_stats_1_0, "twheel_loop_get_stats@TWHEEL_URING_1.0")

/* TWHEEL_URING_1.1 (the default): up to cq_dropped. */
TWHEEL_LOOP_API int twl_get_stats_1_1(const struct twheel_loop *l, struct twheel_loop_stats *st)
	SYMVER_ATTR("twheel_loop_get_stats@@TWHEEL_URING_1.1");
int twl_get_stats_1_1(const struct twheel_loop *l, struct twheel_loop_stats *st)
{
	return get_stats(l, st, sizeof(*st));
}
SYMVER_ASM(twl_get_stats_1_1, "twheel_loop_get_stats@@TWHEEL_URING_1.1")

size_t twheel_loop_count(const struct twheel_loop *l)
{
	return l ? twheel_count(l->wheel) + twheel_count(l->dwheel) : 0;
}
