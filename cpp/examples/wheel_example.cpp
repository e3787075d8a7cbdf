// SPDX-License-Identifier: MIT
// The C++ layer's example in README.md: idle timeouts for connections.
// Built and run by `meson test` so that the documentation cannot rot.
#include <twheel/twheel.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

using namespace std::chrono_literals;

struct Connection {
	std::string peer;
	tw::Timer<tw::Wheel> idle; // cancels itself when the connection goes away
};

int main()
{
	tw::Wheel wheel(1ms); // virtual time from 0, 1 tick = 1 ms
	std::map<int, Connection> conns;
	int closed = 0;
	struct Server {
		std::map<int, Connection> &conns;
		int &closed;
	} srv{conns, closed};

	for (int fd = 3; fd < 6; fd++) {
		Connection &c = conns[fd];
		c.peer = "10.0.0." + std::to_string(fd);
		// A capture of one pointer is stored in the handle
		// (Timer::inline_capacity, 8 bytes); this one takes a heap block.
		c.idle = tw::Timer(wheel, [&srv, fd] {
			std::printf("closing idle %s\n", srv.conns[fd].peer.c_str());
			srv.conns.erase(fd); // destroys this very timer: safe
			srv.closed++;
		});
		c.idle.on_cancel([fd] { std::printf("fd %d stayed busy\n", fd); });
		c.idle.arm_in(30s); // rounded up to whole ticks: never early
	}

	wheel.advance(wheel.now() + 10s);   // 10 s later, fd 4 sends data:
	conns[4].idle.arm_in(30s);          // re-arm (O(1)), fires at 40 s
	conns.erase(5);                     // fd 5 closes: its timer is cancelled

	while (auto next = wheel.next_expiry())
		wheel.advance(*next);

	const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wheel.now().time_since_epoch());
	std::printf("closed %d idle connections at t=%lld ms\n", closed, static_cast<long long>(ms.count()));
	return closed == 2 && conns.empty() ? 0 : 1;
}
