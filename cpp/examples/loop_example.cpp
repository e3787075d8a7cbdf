// SPDX-License-Identifier: MIT
// The C++ layer's loop example: timers, a periodic tick, work posted
// from another thread and one I/O request on an io_uring loop.
// Built and run by `meson test`; exits 77 (skip) where io_uring is refused
// (the loop then runs on epoll, without I/O requests).
#include <twheel/loop.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

using namespace std::chrono_literals;

int main()
{
	try {
		tw::Loop loop; // 1 ms tick, CLOCK_MONOTONIC
		if (loop.features() & TW_LOOP_FEAT_FALLBACK) {
			std::puts("skipped: io_uring is refused here, the loop runs on epoll (no I/O requests)");
			return 77;
		}
		int ticks = 0;

		// Periodic: every 5 ms; if the loop falls behind, run once.
		tw::Timer tick = loop.every(5ms, [&] { ticks++; }, tw::misfire::once);

		// One-shot, 30 ms from now (rounded up: never early).
		tw::Timer done = loop.after(30ms, [&] { loop.stop(); });

		// I/O: a no-op request with a completion handler.
		loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); },
			    [](const io_uring_cqe &cqe) { std::printf("nop completed: %d\n", cqe.res); });

		// Another thread hands work to the loop thread; joined on every
		// path out of this block, exceptions included.
		std::thread producer([&] { loop.post([] { std::puts("posted from another thread"); }); });
		struct joiner {
			std::thread &t;
			~joiner() { t.join(); }
		} join_producer{producer};

		loop.run(); // until stop()
		std::printf("%d ticks in 30 ms\n", ticks);
		return ticks >= 1 ? 0 : 1;
	} catch (const std::exception &e) {
		std::printf("failed: %s\n", e.what());
		return 1;
	}
}
