// SPDX-License-Identifier: MIT
//
// tools/bench/rt_asio.cpp - Boost.Asio's steady_timer (a binary heap per
// io_context) as a table of operations (rt.h), "asio": a re-arm is
// expires_after() + async_wait() on a waiting timer (the old wait completes
// with operation_aborted, run by the next poll()); a cancel is cancel();
// cross-thread schedules are post()ed to the io_context. And the host of
// the Asio adapter (<twheel/asio.hpp>, a tw::AsioHost on an io_context
// pumped with poll()), whose tables rt_asio_host.c makes.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <twheel/asio.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

#include "rt.h"

namespace asio = boost::asio;

namespace {

struct AsioLoop {
	asio::io_context ctx{ 1 };
	std::vector<asio::steady_timer> t;
	std::vector<uint32_t> waits; // per timer: waits started and not completed
};

AsioLoop *cur; // the one that exists

struct Waiter {
	size_t i;
	void operator()(const boost::system::error_code &ec) const
	{
		cur->waits[i]--;
		if (ec != asio::error::operation_aborted)
			rt_fired(i);
	}
};

void *create(const rt_params *, size_t n, char *, size_t)
{
	cur = new AsioLoop;
	cur->t.reserve(n);
	for (size_t i = 0; i < n; i++)
		cur->t.emplace_back(cur->ctx);
	cur->waits.assign(n, 0);
	return cur;
}

void destroy(void *)
{
	for (auto &x : cur->t)
		x.cancel();
	cur->ctx.restart();
	cur->ctx.poll();
	delete cur;
	cur = nullptr;
}

void wait(size_t i)
{
	cur->waits[i]++;
	cur->t[i].async_wait(Waiter{ i });
}

int add(void *, size_t i, uint64_t d, uint64_t)
{
	cur->t[i].expires_after(std::chrono::nanoseconds(d));
	wait(i);
	return 0;
}

int mod(void *, size_t i, uint64_t d, uint64_t)
{
	int was = cur->t[i].expires_after(std::chrono::nanoseconds(d)) > 0; // cancels the wait
	wait(i);
	return was;
}

int del(void *, size_t i) { return cur->t[i].cancel() > 0; }
bool pending(void *, size_t i) { return cur->waits[i] > 0; }

void poll(void *)
{
	if (cur->ctx.stopped())
		cur->ctx.restart();
	cur->ctx.poll();
}

void run(void *)
{
	if (cur->ctx.stopped())
		cur->ctx.restart();
	auto guard = asio::make_work_guard(cur->ctx); // idle_wakeups, xthread: run until stopped
	cur->ctx.run();
}

void stop(void *) { cur->ctx.stop(); }

int schedule(void *, size_t i, uint64_t d)
{
	asio::post(cur->ctx, [i, d] { add(nullptr, i, d, 0); });
	return 0;
}

rt_ops table()
{
	rt_ops o{};
	o.name = "asio";
	o.note[RT_REARM] = "steady_timer expires_after(30 s) + async_wait on a pending timer (the old "
			   "wait completes with operation_aborted), io_context::poll() every 1,000 re-arms "
			   "runs those handlers; wall ns per re-arm";
	o.note[RT_ADD_CANCEL] = "expires_after (ms) + async_wait, then cancel() in random order and poll() "
				"to run the aborted handlers; wall ns per pair";
	o.note[RT_ADD_EXPIRE] = "expires_after + async_wait, then io_context::run() until all fired; "
				"1 tick = 100 ns of real time (span 6.6 ms); wall ns per timer";
	o.res_ns = 1;
	o.create = create;
	o.destroy = destroy;
	o.add = add;
	o.mod = mod;
	o.del = del;
	o.pending = pending;
	o.poll = poll;
	o.run = run;
	o.stop = stop;
	o.wake_stop = stop; // io_context::stop() may be called from any thread
	o.schedule = schedule;
	return o;
}

asio::io_context *io;
tw::AsioHost *host;

} // namespace

extern "C" const rt_ops rt_asio = table();

extern "C" twheel_host *rt_asio_host_open(void)
{
	io = new asio::io_context;
	host = new tw::AsioHost(*io);
	return host->get();
}

extern "C" void rt_asio_host_pump(void)
{
	io->poll();
	io->restart();
}

extern "C" void rt_asio_host_run(void)
{
	io->restart();
	io->run();
}

extern "C" void rt_asio_host_stop(void)
{
	io->stop();
}

extern "C" void rt_asio_host_close(twheel_host *)
{
	delete host;
	io->run();
	delete io;
	host = nullptr;
	io = nullptr;
}
