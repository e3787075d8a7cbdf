// SPDX-License-Identifier: MIT
//
// A counting operator new, for the suites that prove what is and is not
// heap-allocated: g_allocs counts every call, and g_fail_allocs makes them
// fail. Include it in one file of a test program.
#ifndef TWHEEL_TESTS_CPP_COUNT_NEW_H
#define TWHEEL_TESTS_CPP_COUNT_NEW_H

#include <atomic>
#include <cstdlib>
#include <new>

static std::atomic<long> g_allocs{0};
// While set, every allocation fails (std::bad_alloc).
static std::atomic<bool> g_fail_allocs{false};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete" // malloc/free pair by design

void *operator new(std::size_t n)
{
	g_allocs.fetch_add(1, std::memory_order_relaxed);
	if (g_fail_allocs.load(std::memory_order_relaxed))
		throw std::bad_alloc();
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

#endif
