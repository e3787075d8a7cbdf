// SPDX-License-Identifier: MIT
// The tw::Hook example from docs/cpp.md: an intrusive, RAII timer with the
// C API's cost (the hook is the 40-byte C node + a pointer).
// Built and run by `meson test` so that the documentation cannot rot.
#include <twheel/twheel.hpp>

#include <cstdio>
#include <memory>
#include <vector>

struct Session : tw::Hook<tw::Wheel, Session> { // public base
	int id;
	int *expired;

	Session(tw::Wheel &w, int n, int *count) : Hook(w), id(n), expired(count) {}
	void on_timer() noexcept // called directly by the C callback; may delete *this
	{
		std::printf("session %d expired\n", id);
		++*expired;
	}
};

int main()
{
	using namespace std::chrono_literals;
	tw::Wheel wheel; // 1 ms ticks, from time 0
	int expired = 0;
	std::vector<std::unique_ptr<Session>> sessions;
	for (int i = 0; i < 4; i++) {
		sessions.push_back(std::make_unique<Session>(wheel, i, &expired));
		sessions.back()->arm_in(100ms + i * 1ms);
	}
	sessions[1]->arm_in(500ms);   // re-arm: O(1)
	sessions.erase(sessions.begin() + 2); // destroyed: cancelled, never fires
	Session moved(std::move(*sessions.back())); // the move keeps it pending
	wheel.advance(wheel.now() + 1s);
	std::printf("%d expired, %zu pending\n", expired, wheel.size());
	return expired == 3 && wheel.size() == 0 ? 0 : 1;
}
