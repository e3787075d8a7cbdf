// SPDX-License-Identifier: MIT
//
// tools/bench/peer_asio.cpp - Boost.Asio steady_timer (a binary heap per
// io_context) on rearm (expires_after + async_wait: the pending wait
// completes with operation_aborted), add_cancel (async_wait, then cancel)
// and add_expire (time compressed: 1 tick = 100 ns).
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "peer.h"

namespace asio = boost::asio;

namespace {

const char IMPL[] = "asio";

struct counts {
	uint64_t fired = 0;   // waits that completed because the timer expired
	uint64_t aborted = 0; // waits that completed with operation_aborted
};

struct waiter {
	counts *c;
	void operator()(const boost::system::error_code &ec) const
	{
		if (ec == asio::error::operation_aborted)
			c->aborted++;
		else
			c->fired++;
	}
};

// n timers on @ctx, none waiting yet (untimed set-up).
std::vector<asio::steady_timer> timers(asio::io_context &ctx, uint32_t n)
{
	std::vector<asio::steady_timer> t;
	t.reserve(n);
	for (uint32_t i = 0; i < n; i++)
		t.emplace_back(ctx);
	return t;
}

int rearm(const peer_input *in, double *ns)
{
	uint32_t n = in->n, m = in->m;
	asio::io_context ctx(1);
	std::vector<asio::steady_timer> t;
	t.reserve(n);
	counts c;
	const auto delta = std::chrono::milliseconds(BENCH_REARM_DELTA);
	for (uint32_t i = 0; i < n; i++) {
		t.emplace_back(ctx);
		t.back().expires_after(delta);
		t.back().async_wait(waiter{ &c });
	}
	struct rng r = rng_seed(3);
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++) {
			asio::steady_timer &x = t[rng_below(&r, n)];
			x.expires_after(delta); // cancels the pending wait
			x.async_wait(waiter{ &c });
		}
		ctx.poll(); // runs the aborted handlers
	}
	uint64_t t1 = clock_ns();
	uint64_t done = (uint64_t)blocks * BENCH_REARM_BLOCK;
	int rc = (c.fired == 0 && c.aborted == done) ? 0 : -1;
	for (auto &x : t)
		x.cancel();
	ctx.poll();
	*ns = (double)(t1 - t0) / (double)done;
	return rc;
}

int add_cancel(const peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off, *perm = in->perm;
	asio::io_context ctx(1);
	std::vector<asio::steady_timer> t = timers(ctx, n);
	counts c;
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < n; i++) {
		t[i].expires_after(std::chrono::milliseconds(off[i]));
		t[i].async_wait(waiter{ &c });
	}
	for (uint32_t i = 0; i < n; i++)
		t[perm[i]].cancel();
	ctx.poll();
	uint64_t t1 = clock_ns();
	*ns = (double)(t1 - t0) / n;
	return (c.fired == 0 && c.aborted == n) ? 0 : -1;
}

int add_expire(const peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off;
	asio::io_context ctx(1);
	std::vector<asio::steady_timer> t = timers(ctx, n);
	counts c;
	uint64_t t0 = clock_ns();
	auto base = asio::steady_timer::clock_type::now();
	for (uint32_t i = 0; i < n; i++) {
		t[i].expires_at(base + std::chrono::nanoseconds(100 * (uint64_t)off[i]));
		t[i].async_wait(waiter{ &c });
	}
	ctx.run();
	uint64_t t1 = clock_ns();
	*ns = (double)(t1 - t0) / n;
	return (c.fired == n && c.aborted == 0) ? 0 : -1;
}

const peer_ops asio_ops = {
	IMPL,
	{ rearm, "steady_timer expires_after(30 s) + async_wait on a pending timer (the old wait "
		 "completes with operation_aborted), io_context::poll() every 1,000 re-arms runs those "
		 "handlers; wall ns per re-arm",
	  "wrong number of aborted or fired waits" },
	{ add_cancel, "expires_after (ms) + async_wait, then cancel() in random order and poll() to run "
		      "the aborted handlers; wall ns per pair",
	  "wrong number of aborted or fired waits" },
	{ add_expire, "expires_at + async_wait, then io_context::run() until all fired; 1 tick = 100 ns "
		      "of real time (span 6.6 ms); checked: every wait completed by expiry; wall ns per timer",
	  "not every wait completed by expiry" },
};

} // namespace

int main(int argc, char **argv)
{
	const peer_ops *ops[] = { &asio_ops };
	return peer_main(argc, argv, ops, 1);
}
