// asio_example.cpp - idle timeouts in a Boost.Asio program: one
// steady_timer drives every timeout through libtwheel. Activity re-arms a
// connection's timeout; silence closes it. io_context::run() returns once
// no timeout is pending.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <twheel/asio.hpp>

using namespace std::chrono_literals;

struct conn {
	int id;
	int activity;         // how many more times it will look busy
	tw_timer idle{};      // embedded: no allocation per timeout
};

static tw::AsioHost *timeouts;

static void on_idle(tw_timer *t)
{
	conn *c = tw_container_of(t, conn, idle);

	if (c->activity-- > 0) {
		timeouts->mod(*t, 10ms); // busy: 10 ms more
		return;
	}
	std::printf("connection %d idle, closed\n", c->id);
}

int main()
{
	boost::asio::io_context io;
	tw::AsioHost host(io); // 1 ms ticks, CLOCK_MONOTONIC
	conn conns[3] = { { 1, 2 }, { 2, 0 }, { 3, 1 } };

	timeouts = &host;
	for (conn &c : conns) {
		tw_timer_init(&c.idle, on_idle);
		host.add(c.idle, 20ms);
	}
	io.run(); // until no timeout is pending
	return 0;
}
