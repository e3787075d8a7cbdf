/* mixed_hz_main.c - the other file (see mixed_hz.c): exit 0 if both
 * count ticks of the same length. */
#include <twheel/compat/timer_list.h>

int mixed_hz(void);

int main(void)
{
	return mixed_hz() != HZ || msecs_to_jiffies(1000) != (unsigned long)HZ;
}
