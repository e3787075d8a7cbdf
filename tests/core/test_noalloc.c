/*
 * test_noalloc - nothing is allocated after twheel_create(): malloc, calloc,
 * realloc and free are interposed with counters (glibc's __libc_* entry
 * points), and a busy workload of add/mod/del/advance/drain runs with the
 * counters armed. Skipped (77) under sanitizers, which own malloc.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <twheel/twheel.h>

#include "../common/xorshift64.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifndef SANITIZED
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static volatile int armed;
static volatile long allocs;

void *malloc(size_t n)
{
	if (armed)
		allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (armed)
		allocs++;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (armed)
		allocs++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (armed && p)
		allocs++;
	__libc_free(p);
}
#endif

#ifdef SANITIZED
int main(void)
{
	puts("SKIP: sanitizers interpose malloc themselves");
	return 77;
}
#else
static long fired;
static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}
static void on_drain(struct tw_timer *t, void *arg)
{
	(void)t;
	(*(long *)arg)++;
}

int main(void)
{
	enum { N = 100000 };
	static struct tw_timer t[N];
	armed = 1;
	struct twheel *w = twheel_create(0);
	long at_create = allocs;
	for (int i = 0; i < N; i++)
		tw_timer_init(&t[i], on_fire);
	uint64_t x = 42;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < N; i++) {
			xorshift64(&x);
			tw_tick_t now = twheel_now(w);
			switch (x % 4) {
			case 0: twheel_add(w, &t[i], now + (x >> 40)); break;
			case 1: twheel_mod(w, &t[i], now + (x >> (x % 64))); break;
			case 2: twheel_del(w, &t[i]); break;
			default: twheel_mod(w, &t[i], now); break;
			}
		}
		twheel_advance(w, twheel_now(w) + (x >> 50));
		twheel_advance(w, twheel_next_expiry(w) > twheel_now(w) ? twheel_next_expiry(w) : twheel_now(w));
	}
	long drained = 0;
	twheel_drain(w, on_drain, &drained);
	long during = allocs - at_create;
	twheel_destroy(w);
	armed = 0;
	printf("allocations: %ld by create, %ld afterwards (fired %ld, drained %ld)\n",
	       at_create, during, fired, drained);
	if (at_create != 1 || during != 0 || fired == 0) {
		printf("FAIL: expected exactly one allocation, in twheel_create()\n");
		return 1;
	}
	return 0;
}
#endif
