/* SPDX-License-Identifier: MIT */
/*
 * signal_shim.c - LD_PRELOAD'ed into a demo server by signal_test.py: a
 * signal the process sends itself at a chosen point of its start, which
 * a test cannot hit from outside but by chance.
 *
 * SIGNAL_SHIM_AT=getrlimit|socket: at the first call of that function
 * (the TCP servers raise their descriptor limit, the UDP server opens its
 * socket, before anything else of their own), send SIGNAL_SHIM_SIG (a
 * signal number) to the process, then do the call.
 */
#define _GNU_SOURCE 1 /* RTLD_NEXT */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* The first call of @name (if it is SIGNAL_SHIM_AT): the signal. */
static void maybe_signal(const char *name)
{
	static int done;
	const char *at = getenv("SIGNAL_SHIM_AT"), *sig = getenv("SIGNAL_SHIM_SIG");
	if (done || !at || !sig || strcmp(at, name) != 0)
		return;
	done = 1;
	kill(getpid(), atoi(sig));
}

int getrlimit(__rlimit_resource_t resource, struct rlimit *rl)
{
	static int (*real)(__rlimit_resource_t, struct rlimit *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "getrlimit");
	maybe_signal("getrlimit");
	return real(resource, rl);
}

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "socket");
	maybe_signal("socket");
	return real(domain, type, protocol);
}
