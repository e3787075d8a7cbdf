/*
 * twheel::twheel-uring: the loop's header and library. The header does not
 * need liburing's (or _GNU_SOURCE): this file compiles as plain C11.
 */
#include <errno.h>
#include <stdio.h>

#include <twheel/loop.h>

int main(void)
{
	struct twheel_loop_config cfg;
	twheel_loop_config_init(&cfg);
	/* A bad tick is refused before any io_uring is set up. */
	struct twheel_loop *loop = NULL;
	cfg.tick_ns = 1;
	if (twheel_loop_create(&loop, &cfg, NULL, 0) != -EINVAL || loop)
		return 1;
	printf("use_loop: twheel_loop_create checks its configuration\n");
	return 0;
}
