// SPDX-License-Identifier: MIT
// <twheel/twheel.h> in C++ code that forbids C-style casts
// (-Wold-style-cast -Werror): the inline re-arm's code must compile there.
// clang++ checks it (g++ does not warn about these casts).
#include <twheel/twheel.h>

int rearm(struct twheel *w, struct tw_timer *t, tw_tick_t e);

int rearm(struct twheel *w, struct tw_timer *t, tw_tick_t e)
{
	return twheel_mod(w, t, e);
}
