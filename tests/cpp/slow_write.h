// SPDX-License-Identifier: MIT
//
// A write() that the C loop's wake-up (an eventfd write, through the PLT)
// reaches: on a thread that sets g_slow_writes it waits 50 ms first, so
// that the loop can act on a post or stop before the call returns, and
// notes a write to a closed fd (the loop's eventfd, closed by its
// destruction meanwhile). Include it in one file of a test program.
#ifndef TWHEEL_TESTS_CPP_SLOW_WRITE_H
#define TWHEEL_TESTS_CPP_SLOW_WRITE_H

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

static thread_local bool g_slow_writes = false;
static std::atomic<bool> g_wrote_closed_fd{false};

extern "C" ssize_t write(int fd, const void *buf, size_t n)
{
	if (g_slow_writes)
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	const long r = syscall(SYS_write, fd, buf, n);
	if (r < 0 && errno == EBADF && g_slow_writes)
		g_wrote_closed_fd = true;
	return r;
}

#endif
