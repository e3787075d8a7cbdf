/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/alloc.c - count every allocation the benchmark process makes,
 * so that the workloads can check that libtwheel allocates nothing after
 * twheel_create() (and the heaps nothing after their init).
 *
 * Defining malloc and friends in the executable interposes them for the
 * whole process, libtwheel included (shared or static); each wrapper bumps
 * a counter and calls glibc's own implementation.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

volatile uint64_t bench_alloc_calls;
volatile size_t bench_alloc_last_size;

#ifdef BENCH_NO_ALLOC_HOOK
/* Sanitizer builds: the sanitizer owns malloc; nothing is counted. */
const int bench_alloc_hooked = 0;
#else
const int bench_alloc_hooked = 1;

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

static inline void count(size_t size)
{
	bench_alloc_calls = bench_alloc_calls + 1;
	bench_alloc_last_size = size;
}

void *malloc(size_t size)
{
	count(size);
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count(n * size);
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	count(size);
	return __libc_realloc(p, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count(size);
	return __libc_memalign(align, size);
}

void *memalign(size_t align, size_t size)
{
	count(size);
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	count(size);
	void *p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *p)
{
	__libc_free(p);
}
#endif /* BENCH_NO_ALLOC_HOOK */
