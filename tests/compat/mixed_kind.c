/*
 * mixed_kind.c - one file of a program that arms a timer another file
 * defines (mixed_kind_main.c), each built with or without
 * TWHEEL_COMPAT_TIMER_DATA (meson.build links them in each combination).
 * Of the same kind they agree on struct timer_list; of different kinds
 * they would not, and must not link. Only sizes and a field: nothing here
 * calls the library.
 */
#include <stddef.h>
#include <twheel/compat/timer_list.h>

size_t mixed_kind_size(void);
size_t mixed_kind_flags_at(void);

size_t mixed_kind_size(void)
{
	return sizeof(struct timer_list);
}

size_t mixed_kind_flags_at(void)
{
	return offsetof(struct timer_list, flags);
}
