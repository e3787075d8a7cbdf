/*
 * threads_ev.c - test_threads' libev half: <ev.h> and libevent's headers
 * cannot share a translation unit (docs/event-loops.md).
 */
#include <twheel/ev.h>

/* A loop of its own and an adapter on it, or NULL. */
struct twheel_host *threads_ev_create(void **loop)
{
	struct ev_loop *l = ev_loop_new(EVFLAG_AUTO);

	*loop = l;
	return l ? twheel_ev_create(l, NULL) : NULL;
}

void threads_ev_run(void *loop)
{
	ev_run(loop, 0);
}

/* Destroy the adapter, then the loop; twheel_ev_destroy()'s result. */
int threads_ev_destroy(struct twheel_host *h, void *loop)
{
	int rc = h ? twheel_ev_destroy(h, NULL, NULL) : 0;

	if (loop)
		ev_loop_destroy(loop);
	return rc;
}
