// SPDX-License-Identifier: MIT
//
// bench_cpp - the cost of the twheel++ layer over the C API, measured in one
// process: the add_cancel and rearm workloads of /work/shared/BENCHMARKS.md
// (virtual time, splitmix64 seed 42), each run through the C API and through
// twheel::Timer, in rotation, for several repetitions. The C API runs twice:
// with bare 40-byte nodes, and with nodes padded to sizeof(twheel::Timer)
// (same memory footprint as the C++ handles, so the difference is the
// layer's code alone). Prints the median and min-max ns per operation of
// each, and the C++/C ratios of the medians.
//
//   bench_cpp            N = 1,000,000, M = 10,000,000 re-arms, 7 repetitions
//   bench_cpp --quick    a smoke test (N = 10,000, M = 100,000, 3 repetitions)
//   bench_cpp --reps R --n N --m M
//
// Every run checks its result (no callback fires in add_cancel; in rearm no
// timer fires early and the wheel holds exactly C timers at the end); a run
// that fails prints no figure and the program exits 1. Pin it for stable
// figures: taskset -c 1 bench_cpp.
#include <twheel/twheel.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Rng {
	std::uint64_t s;
	std::uint64_t next()
	{
		std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	std::uint64_t below(std::uint64_t n) { return next() % n; }
};

double now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

bool g_failed = false;

void fail(const char *what)
{
	std::fprintf(stderr, "bench_cpp: check failed: %s\n", what);
	g_failed = true;
}

// ---- Inputs shared by both implementations ------------------------------------

struct AddCancelInput {
	std::vector<twheel::tick_t> expiry; // relative to now
	std::vector<std::uint32_t> order;   // cancel order (a permutation)
};

AddCancelInput make_add_cancel(std::size_t n)
{
	Rng r{42};
	AddCancelInput in;
	in.expiry.resize(n);
	in.order.resize(n);
	for (std::size_t i = 0; i < n; i++) {
		in.expiry[i] = 1 + r.below(65536);
		in.order[i] = static_cast<std::uint32_t>(i);
	}
	for (std::size_t i = n; i > 1; i--)
		std::swap(in.order[i - 1], in.order[r.below(i)]);
	return in;
}

constexpr twheel::tick_t kStart = 1'000'000;
constexpr twheel::tick_t kRearmDelay = 30'000;

// ---- C API ---------------------------------------------------------------------

// The C user's object: the node alone (40 bytes), or the node padded to the
// size of a twheel::Timer, which separates the cost of the layer's code from
// that of its larger footprint (callable storage and wheel pointer).
template <std::size_t Size>
struct CTimerT {
	struct tw_timer t;
	unsigned char pad[Size - sizeof(struct tw_timer)];
};
template <>
struct CTimerT<sizeof(struct tw_timer)> {
	struct tw_timer t;
};

long g_c_fired = 0;
twheel_c *g_c_wheel = nullptr;
long g_c_early = 0;

void c_cb(struct tw_timer *t)
{
	g_c_fired++;
	if (tw_timer_expires(t) > twheel_now(g_c_wheel))
		g_c_early++;
}

template <std::size_t Size>
double c_add_cancel(const AddCancelInput &in)
{
	using CTimer = CTimerT<Size>;
	const std::size_t n = in.expiry.size();
	std::unique_ptr<CTimer[]> ts(new CTimer[n]);
	for (std::size_t i = 0; i < n; i++)
		tw_timer_init(&ts[i].t, c_cb);
	twheel_c *w = twheel_create(kStart);
	g_c_fired = 0;
	const double t0 = now_ns();
	for (std::size_t i = 0; i < n; i++)
		twheel_add(w, &ts[i].t, kStart + in.expiry[i]);
	for (std::size_t i = 0; i < n; i++)
		twheel_del(w, &ts[in.order[i]].t);
	const double t1 = now_ns();
	if (twheel_count(w) != 0 || g_c_fired != 0)
		fail("C add_cancel");
	twheel_destroy(w);
	return (t1 - t0) / static_cast<double>(n);
}

template <std::size_t Size>
double c_rearm(std::size_t n, std::size_t m)
{
	using CTimer = CTimerT<Size>;
	std::unique_ptr<CTimer[]> ts(new CTimer[n]);
	twheel_c *w = twheel_create(kStart);
	g_c_wheel = w;
	g_c_fired = g_c_early = 0;
	for (std::size_t i = 0; i < n; i++) {
		tw_timer_init(&ts[i].t, c_cb);
		twheel_add(w, &ts[i].t, kStart + kRearmDelay);
	}
	Rng r{42};
	twheel::tick_t now = kStart;
	const double t0 = now_ns();
	for (std::size_t k = 1; k <= m; k++) {
		twheel_mod(w, &ts[r.below(n)].t, now + kRearmDelay);
		if (k % 1000 == 0)
			twheel_advance(w, ++now);
	}
	const double t1 = now_ns();
	if (g_c_early != 0 || twheel_count(w) + static_cast<std::size_t>(g_c_fired) != n)
		fail("C rearm");
	twheel_drain(w, [](struct tw_timer *, void *) {}, nullptr);
	twheel_destroy(w);
	return (t1 - t0) / static_cast<double>(m);
}

// ---- C++ layer -------------------------------------------------------------------

struct CppCounters {
	long fired = 0;
	long early = 0;
	const twheel::Wheel *w = nullptr;
};

double cpp_add_cancel(const AddCancelInput &in)
{
	const std::size_t n = in.expiry.size();
	twheel::Wheel w(kStart);
	CppCounters c;
	std::vector<twheel::Timer> ts;
	ts.reserve(n);
	for (std::size_t i = 0; i < n; i++)
		ts.emplace_back(w, [&c] { c.fired++; });
	const double t0 = now_ns();
	for (std::size_t i = 0; i < n; i++)
		ts[i].arm_at(kStart + in.expiry[i]);
	for (std::size_t i = 0; i < n; i++)
		ts[in.order[i]].cancel();
	const double t1 = now_ns();
	if (w.size() != 0 || c.fired != 0)
		fail("C++ add_cancel");
	return (t1 - t0) / static_cast<double>(n);
}

double cpp_rearm(std::size_t n, std::size_t m)
{
	twheel::Wheel w(kStart);
	CppCounters c;
	c.w = &w;
	std::vector<twheel::Timer> ts;
	ts.reserve(n);
	for (std::size_t i = 0; i < n; i++) {
		ts.emplace_back(w, [&c](twheel::Timer &self) {
			c.fired++;
			if (self.native_handle()->expires > c.w->now())
				c.early++;
		});
		ts.back().arm_at(kStart + kRearmDelay);
	}
	Rng r{42};
	twheel::tick_t now = kStart;
	const double t0 = now_ns();
	for (std::size_t k = 1; k <= m; k++) {
		ts[r.below(n)].arm_at(now + kRearmDelay);
		if (k % 1000 == 0)
			w.advance(++now);
	}
	const double t1 = now_ns();
	if (c.early != 0 || w.size() + static_cast<std::size_t>(c.fired) != n)
		fail("C++ rearm");
	return (t1 - t0) / static_cast<double>(m);
}

// ---- Reporting -------------------------------------------------------------------

struct Series {
	std::vector<double> v;
	double median() const
	{
		std::vector<double> s = v;
		std::sort(s.begin(), s.end());
		const std::size_t k = s.size();
		return k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	}
	double min() const { return *std::min_element(v.begin(), v.end()); }
	double max() const { return *std::max_element(v.begin(), v.end()); }
};

void print(const char *name, const char *unit, std::size_t n, const Series &c, const Series &cpad,
	   const Series &cpp)
{
	const auto line = [&](const char *who, const Series &x) {
		std::printf("%-10s %-14s N=%zu reps=%zu  median %7.2f  min-max %7.2f-%7.2f  ns/%s\n", name,
			    who, n, x.v.size(), x.median(), x.min(), x.max(), unit);
	};
	line("C (40 B)", c);
	line("C (padded)", cpad);
	line("C++ Timer", cpp);
	std::printf("%-10s C++/C median ratio %.3f (%+.1f%%); C++/C-padded %.3f (%+.1f%%)\n", name,
		    cpp.median() / c.median(), (cpp.median() / c.median() - 1) * 100,
		    cpp.median() / cpad.median(), (cpp.median() / cpad.median() - 1) * 100);
}

} // namespace

int main(int argc, char **argv)
{
	std::size_t n = 1'000'000, m = 10'000'000, reps = 7;
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		if (a == "--quick") {
			n = 10'000;
			m = 100'000;
			reps = 3;
		} else if (a == "--reps" && i + 1 < argc) {
			reps = std::strtoul(argv[++i], nullptr, 10);
		} else if (a == "--n" && i + 1 < argc) {
			n = std::strtoul(argv[++i], nullptr, 10);
		} else if (a == "--m" && i + 1 < argc) {
			m = std::strtoul(argv[++i], nullptr, 10);
		} else {
			std::fprintf(stderr, "usage: %s [--quick] [--reps R] [--n N] [--m M]\n", argv[0]);
			return 2;
		}
	}
	if (n == 0 || m == 0 || reps == 0) {
		std::fprintf(stderr, "bench_cpp: N, M and reps must be positive\n");
		return 2;
	}
	std::printf("bench_cpp: twheel %s, sizeof(tw_timer)=%zu, sizeof(twheel::Timer)=%zu\n",
		    twheel_version(), sizeof(struct tw_timer), sizeof(twheel::Timer));

	const AddCancelInput in = make_add_cancel(n);
	constexpr std::size_t bare = sizeof(struct tw_timer), padded = sizeof(twheel::Timer);
	Series ac_c, ac_pad, ac_cpp, re_c, re_pad, re_cpp;
	for (std::size_t r = 0; r < reps; r++) {
		// rotate the order so that none always runs first (or warm)
		for (std::size_t k = 0; k < 3; k++) {
			switch ((r + k) % 3) {
			case 0:
				ac_c.v.push_back(c_add_cancel<bare>(in));
				re_c.v.push_back(c_rearm<bare>(n, m));
				break;
			case 1:
				ac_pad.v.push_back(c_add_cancel<padded>(in));
				re_pad.v.push_back(c_rearm<padded>(n, m));
				break;
			default:
				ac_cpp.v.push_back(cpp_add_cancel(in));
				re_cpp.v.push_back(cpp_rearm(n, m));
				break;
			}
		}
	}
	if (g_failed)
		return 1;
	print("add_cancel", "pair", n, ac_c, ac_pad, ac_cpp);
	print("rearm", "rearm", n, re_c, re_pad, re_cpp);
	std::printf("(rearm: C = %zu live timers, M = %zu re-arms, one advance per 1,000)\n", n, m);
	return 0;
}
