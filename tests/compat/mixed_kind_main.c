/* mixed_kind_main.c - the other file (see mixed_kind.c): exit 0 if both
 * see the same struct timer_list. */
#include <stddef.h>
#include <twheel/compat/timer_list.h>

size_t mixed_kind_size(void);
size_t mixed_kind_flags_at(void);

int main(void)
{
	return mixed_kind_size() != sizeof(struct timer_list) ||
	       mixed_kind_flags_at() != offsetof(struct timer_list, flags);
}
