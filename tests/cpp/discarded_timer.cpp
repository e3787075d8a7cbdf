// SPDX-License-Identifier: MIT
// Must NOT compile with -Werror: a timer handle that cancels its timer the
// moment it is dropped is [[nodiscard]], so the compiler warns about
// `wheel.after(d, f);` (which would never fire). call_after() is the
// fire-and-forget call.
#include <twheel/twheel.hpp>

int main()
{
	using namespace std::chrono_literals;
	tw::Wheel wheel;
	wheel.call_after(10ms, [] {}); // fine: fire and forget
	wheel.after(10ms, [] {});      // warning: ignoring returned value
	return 0;
}
