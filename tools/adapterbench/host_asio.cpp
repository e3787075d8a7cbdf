// SPDX-License-Identifier: MIT
//
// tools/adapterbench/host_asio.cpp - adapterbench's host on Boost.Asio: a
// tw::AsioHost (<twheel/asio.hpp>) on an io_context, pumped with poll(),
// the way bench-peer-asio pumps its steady_timers.
#include <boost/asio/io_context.hpp>
#include <twheel/asio.hpp>

#include <memory>

static boost::asio::io_context *io;
static tw::AsioHost *host;

extern "C" struct twheel_host *host_open(void)
{
	io = new boost::asio::io_context;
	host = new tw::AsioHost(*io);
	return host->get();
}

extern "C" void host_pump(void)
{
	io->poll();
	io->restart();
}

extern "C" void host_close(struct twheel_host *h)
{
	(void)h;
	delete host;
	io->run();
	delete io;
	host = nullptr;
	io = nullptr;
}
