/* SPDX-License-Identifier: MIT */
/* The binary heap under the workloads of wl.h. */
#define HEAP_P heap2
#define IMPL_NAME "heap2"
#include "impl_heap_tmpl.h"
