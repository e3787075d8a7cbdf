/*
 * mixed_hz.c - one file of a program whose other file (mixed_hz_main.c)
 * includes the other legacy header, each built with some
 * TWHEEL_COMPAT_HZ (meson.build links them in several combinations). With
 * the same HZ they agree on what a tick is; with different ones a second
 * of one would not be a second of the other, and they must not link.
 * Nothing here calls the library.
 */
#include <twheel/compat/callout.h>

int mixed_hz(void);

int mixed_hz(void)
{
	return hz;
}
