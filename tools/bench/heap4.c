/* SPDX-License-Identifier: MIT */
/* The 4-ary heap (libev's layout). See heap.h. */
#define HEAP_D 4
#define HEAP_P heap4
#include "heap_impl.h"
