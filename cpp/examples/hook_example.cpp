// SPDX-License-Identifier: MIT
#include <twheel/twheel.hpp>

#include <chrono>
#include <cstdio>

using namespace std::chrono_literals;

struct Conn : tw::Hook<tw::Wheel, Conn> { // public base: the hook's calls are Conn's
	int fd;
	Conn(tw::Wheel &w, int f) : Hook(w), fd(f) {}
	void on_timer() { std::printf("fd %d idle\n", fd); } // may delete *this
	void on_cancel() { std::printf("fd %d closed first\n", fd); } // optional
};

int main()
{
	tw::Wheel wheel(1ms);                        // tick 1 ms, time 0
	tw::Timer retry(wheel, [] { std::puts("retry"); }); // not armed yet
	retry.arm_in(250ms);                         // rounded up: never early
	auto beat = wheel.every(100ms, [](tw::Timer<tw::Wheel> &self) {
		std::printf("beat, %u missed\n", self.missed());
	});
	wheel.call_after(50ms, [] { std::puts("fire and forget"); });
	Conn c(wheel, 7);
	c.arm_in(30s);
	for (int i = 0; i < 10; i++)
		wheel.advance(wheel.now() + 100ms);  // runs what is due, in order
	c.cancel();                                  // true: on_cancel() ran
	return retry.pending() ? 1 : 0;
}
