/* SPDX-License-Identifier: MIT */
/* The binary heap (libuv, libevent, Boost.Asio). See heap.h. */
#define HEAP_D 2
#define HEAP_P heap2
#include "heap_impl.h"
