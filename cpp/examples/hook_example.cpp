// SPDX-License-Identifier: MIT
// The tw::TimerHook example from docs/cpp.md: an intrusive, RAII timer
// with the C API's cost (the hook is the 40-byte C node + a wheel pointer).
// Built and run by `meson test` so that the documentation cannot rot.
#include <twheel/twheel.hpp>

#include <cstdio>
#include <memory>
#include <vector>

struct Session : tw::TimerHook<Session> { // public base
	int id;
	int *expired;

	Session(tw::Wheel &w, int id, int *expired) : TimerHook(w), id(id), expired(expired) {}
	void on_timer() noexcept // called directly by the C callback; may delete *this
	{
		std::printf("session %d expired\n", id);
		++*expired;
	}
};

int main()
{
	tw::Wheel wheel(0);
	int expired = 0;
	std::vector<std::unique_ptr<Session>> sessions;
	for (int i = 0; i < 4; i++) {
		sessions.push_back(std::make_unique<Session>(wheel, i, &expired));
		sessions.back()->arm_at(100 + static_cast<tw::tick_t>(i));
	}
	sessions[1]->arm_at(500);     // re-arm: O(1)
	sessions.erase(sessions.begin() + 2); // destroyed: cancelled, never fires
	Session moved(std::move(*sessions.back())); // the move keeps it pending
	wheel.advance(1000);
	std::printf("%d expired, %zu pending\n", expired, wheel.size());
	return expired == 3 && wheel.size() == 0 ? 0 : 1;
}
