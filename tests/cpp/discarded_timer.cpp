// SPDX-License-Identifier: MIT
// Must NOT compile with -Werror: a timer handle that cancels its timer the
// moment it is dropped is [[nodiscard]], so the compiler warns about
// `wheel.after(d, f);` (which would never fire; in C++20 the warning says
// so: cpp-discarded-timer-says-why). call_after() is the
// fire-and-forget call. Arming a temporary timer (cancelled at the end of
// the statement) must not compile at all: -DTEMPORARY and the others.
// Nor must a time point of another clock than the owner's, with a
// static_assert's message at the call (-DOTHER_CLOCK; it failed deep
// inside the template).
#include <twheel/twheel.hpp>

int main()
{
	using namespace std::chrono_literals;
	tw::Wheel wheel;
	wheel.call_after(10ms, [] {}); // fine: fire and forget
	wheel.after(10ms, [] {});      // warning: ignoring returned value
#if TEMPORARY // an error: a temporary is cancelled at the end of the statement
	tw::Timer(wheel, [] {}).arm_in(10ms);
#elif TEMPORARY_EVERY
	tw::Timer(wheel, [] {}).arm_every(10ms);
#elif TEMPORARY_HOOK
	struct Conn : tw::Hook<tw::Wheel, Conn> {
		using Hook::Hook;
		void on_timer() {}
	};
	Conn(wheel).arm_at(wheel.now());
#elif OTHER_CLOCK // errors that say so at the call: a Wheel's time points are Wheel::clock's
	tw::Timer<tw::Wheel> t(wheel, [] {});
	(void)t.arm_at(std::chrono::steady_clock::now());
	(void)wheel.at(std::chrono::system_clock::now(), [] {});
#endif
	return 0;
}
