// asio_example.cpp - idle timeouts in a Boost.Asio program: one
// steady_timer drives every timeout through libtwheel. Activity re-arms a
// connection's timeout; silence closes it. io_context::run() returns once
// no timeout is pending.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <twheel/asio.hpp>

using namespace std::chrono_literals;

// The timeout is part of the connection: no allocation per timeout.
struct conn : tw::Hook<tw::AsioHost, conn> {
	int id;
	int activity; // how many more times it will look busy

	conn(tw::AsioHost &h, int i, int a) : Hook(h), id(i), activity(a) {}
	void on_timer()
	{
		if (activity-- > 0) {
			arm_in(10ms); // busy: 10 ms more
			return;
		}
		std::printf("connection %d idle, closed\n", id);
	}
};

int main()
{
	boost::asio::io_context io;
	tw::AsioHost host(io); // 1 ms ticks, CLOCK_MONOTONIC
	conn conns[3] = { { host, 1, 2 }, { host, 2, 0 }, { host, 3, 1 } };

	for (conn &c : conns)
		c.arm_in(20ms);
	io.run(); // until no timeout is pending
	return 0;
}
