/*
 * figures - print the sizes the documentation states, measured, one
 * "name value" line each, for check_figures.py to compare with the text.
 *
 * The release layout of struct tw_timer is what the docs quote; this file
 * sees it whatever the build (figures_layout.c is compiled twice, with
 * TWHEEL_DEBUG_CHECKS 0 and 1). The wheel's one allocation is caught by an
 * interposed malloc; under a sanitizer, which owns malloc, it is not
 * printed (and the figures that need it are not checked).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <twheel/twheel.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define SANITIZED 1
#endif
#endif

void figures_layout_release(void);
void figures_layout_debug(void);

#ifndef SANITIZED
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
static size_t allocated;
static int counting;

void *malloc(size_t n)
{
	if (counting)
		allocated += n;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (counting)
		allocated += n * m;
	return __libc_calloc(n, m);
}
#endif

int main(void)
{
	figures_layout_release();
	figures_layout_debug();
	printf("levels %d\nlevel0_bits %d\nlevel_bits %d\n", TWHEEL_LEVELS, TWHEEL_LEVEL0_BITS,
	       TWHEEL_LEVEL_BITS);
#ifndef SANITIZED
	counting = 1;
	struct twheel *w = twheel_create(0);
	counting = 0;
	if (!w)
		return 1;
	twheel_destroy(w);
	printf("wheel_alloc_bytes %zu\n", allocated);
#endif
	return 0;
}
