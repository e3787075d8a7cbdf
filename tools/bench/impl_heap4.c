/* SPDX-License-Identifier: MIT */
/* The 4-ary heap under the workloads of wl.h. */
#define HEAP_P heap4
#define IMPL_NAME "heap4"
#include "impl_heap_tmpl.h"
