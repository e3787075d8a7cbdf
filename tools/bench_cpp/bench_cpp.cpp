// SPDX-License-Identifier: MIT
//
// bench_cpp - the cost of the C++ layer over the C API, like for like,
// in one process: the add_cancel and rearm workloads of docs/bench.md
// (virtual time, splitmix64 seed 42), each run through five kinds of timer
// object, in rotation, for several repetitions:
//
//   a  C, bare       struct tw_timer alone (40 B); the callback uses globals
//   b  C, context    what a C user writes for the same job: struct tw_timer
//                    + a pointer to the state the callback uses (48 B),
//                    reached with tw_container_of()
//   c  C++ Timer     tw::Timer with a lambda capturing one pointer (64 B)
//   d  C++ hook      a struct deriving from tw::TimerHook<> with the
//                    same pointer as a member (48 B hook + 8 = 56 B)
//   e  C, padded     (a)'s code over nodes padded to sizeof(tw::Timer)
//                    (64 B): the footprint alone, no layer
//
// Every kind does the same work: the same expiries, cancel order and random
// picks; the C kinds call twheel_add()/twheel_mod()/twheel_del() with the
// wheel in hand, the C++ kinds arm_at()/cancel() on the handle. Prints the
// median and min-max ns per operation of each, and the ratios of the
// medians of c and d to a and to b, by wall time and by the thread's CPU
// time.
//
//   bench_cpp            N = 1,000,000, M = 10,000,000 re-arms, 7 repetitions
//   bench_cpp --quick    a smoke test (N = 10,000, M = 100,000, 3 repetitions)
//   bench_cpp --reps R --n N --m M --only abcde --workload add_cancel|rearm|both
//
// Every run checks its result (no callback fires in add_cancel; in rearm no
// timer fires early and the wheel holds exactly N timers minus those fired);
// a run that fails prints no figure and the program exits 1. Pin it for
// stable figures: taskset -c 1 bench_cpp. For instruction counts per
// operation, run one kind under callgrind, collecting only the timed loops:
//   valgrind --tool=callgrind --toggle-collect='*timed_*' bench_cpp --only c ...
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

double clock_ns(clockid_t id)
{
	timespec ts;
	clock_gettime(id, &ts);
	return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Wall time, and this thread's CPU time (which leaves out the time the
// thread waited for the CPU on a loaded machine; cache and memory-bandwidth
// contention from other processes still shows in both).
struct Stamp {
	double wall, cpu;
};
Stamp now_ns() { return {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_THREAD_CPUTIME_ID)}; }

// ns per operation between two stamps
struct Sample {
	double wall, cpu;
};
Sample per_op(Stamp t0, Stamp t1, std::size_t ops)
{
	const double k = static_cast<double>(ops);
	return {(t1.wall - t0.wall) / k, (t1.cpu - t0.cpu) / k};
}

bool g_failed = false;

void fail(const char *what)
{
	std::fprintf(stderr, "bench_cpp: check failed: %s\n", what);
	g_failed = true;
}

struct AddCancelInput {
	std::vector<tw::tick_t> expiry; // relative to now
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

constexpr tw::tick_t kStart = 1'000'000;
constexpr tw::tick_t kRearmDelay = 30'000;

// What every callback updates: fires, and fires before their expiry.
struct Counters {
	long fired = 0;
	long early = 0;
	twheel *w = nullptr;
};

#define NOINLINE __attribute__((noinline))

// ---- a, e: C, the node alone (optionally padded) --------------------------------

Counters g_c; // the bare C callback has no other way to its state

void c_cb(struct tw_timer *t)
{
	g_c.fired++;
	if (tw_timer_expires(t) > twheel_now(g_c.w))
		g_c.early++;
}

template <std::size_t Size>
struct CTimerT {
	struct tw_timer t;
	unsigned char pad[Size - sizeof(struct tw_timer)];
};
template <>
struct CTimerT<sizeof(struct tw_timer)> {
	struct tw_timer t;
};

// The C kinds' timed loops, over any node with a struct tw_timer member t.
template <class Node>
NOINLINE void timed_c_add_cancel(twheel *w, Node *ts, const AddCancelInput &in)
{
	const std::size_t n = in.expiry.size();
	for (std::size_t i = 0; i < n; i++)
		twheel_add(w, &ts[i].t, kStart + in.expiry[i]);
	for (std::size_t i = 0; i < n; i++)
		twheel_del(w, &ts[in.order[i]].t);
}

template <class Node>
NOINLINE void timed_c_rearm(twheel *w, Node *ts, std::size_t n, std::size_t m)
{
	Rng r{42};
	tw::tick_t now = kStart;
	for (std::size_t k = 1; k <= m; k++) {
		twheel_mod(w, &ts[r.below(n)].t, now + kRearmDelay);
		if (k % 1000 == 0)
			twheel_advance(w, ++now);
	}
}

// A C kind: Traits::Node the node, Traits::init(node, counters) sets it up,
// Traits::counters(local) the Counters its callback updates.
template <class Traits>
struct CKind {
	using Node = typename Traits::Node;

	static Sample add_cancel(const AddCancelInput &in)
	{
		const std::size_t n = in.expiry.size();
		Counters local;
		Counters &c = Traits::counters(local);
		std::unique_ptr<Node[]> ts(new Node[n]);
		for (std::size_t i = 0; i < n; i++)
			Traits::init(ts[i], &c);
		twheel *w = twheel_create(kStart);
		c = Counters{0, 0, w};
		const Stamp t0 = now_ns();
		timed_c_add_cancel(w, ts.get(), in);
		const Stamp t1 = now_ns();
		if (twheel_count(w) != 0 || c.fired != 0)
			fail((std::string(Traits::name) + " add_cancel").c_str());
		twheel_destroy(w);
		return per_op(t0, t1, n);
	}

	static Sample rearm(std::size_t n, std::size_t m)
	{
		Counters local;
		Counters &c = Traits::counters(local);
		std::unique_ptr<Node[]> ts(new Node[n]);
		twheel *w = twheel_create(kStart);
		c = Counters{0, 0, w};
		for (std::size_t i = 0; i < n; i++) {
			Traits::init(ts[i], &c);
			twheel_add(w, &ts[i].t, kStart + kRearmDelay);
		}
		const Stamp t0 = now_ns();
		timed_c_rearm(w, ts.get(), n, m);
		const Stamp t1 = now_ns();
		if (c.early != 0 || twheel_count(w) + static_cast<std::size_t>(c.fired) != n)
			fail((std::string(Traits::name) + " rearm").c_str());
		twheel_drain(w, [](struct tw_timer *, void *) {}, nullptr);
		twheel_destroy(w);
		return per_op(t0, t1, m);
	}
};

// a, e: the bare node; its callback reaches the global g_c.
template <std::size_t Size>
struct CBareTraits {
	using Node = CTimerT<Size>;
	static constexpr const char *name = "C";
	static Counters &counters(Counters &) { return g_c; }
	static void init(Node &x, Counters *) { tw_timer_init(&x.t, c_cb); }
};
template <std::size_t Size>
using CBare = CKind<CBareTraits<Size>>;

// ---- b: C, node + context pointer --------------------------------------------------

struct CCtxTimer {
	struct tw_timer t;
	Counters *ctx;
};

void cctx_cb(struct tw_timer *t)
{
	CCtxTimer *o = tw_container_of(t, CCtxTimer, t);
	o->ctx->fired++;
	if (tw_timer_expires(t) > twheel_now(o->ctx->w))
		o->ctx->early++;
}

struct CCtxTraits {
	using Node = CCtxTimer;
	static constexpr const char *name = "C+ctx";
	static Counters &counters(Counters &local) { return local; }
	static void init(Node &x, Counters *c)
	{
		tw_timer_init(&x.t, cctx_cb);
		x.ctx = c;
	}
};
using CCtx = CKind<CCtxTraits>;

// ---- c: tw::Timer, lambda capturing one pointer -----------------------------
// ---- d: tw::TimerHook, the same pointer as a member -----------------------

struct HookTimer : tw::TimerHook<HookTimer> {
	Counters *c;
	HookTimer(tw::Wheel &w, Counters *cc) : TimerHook(w), c(cc) {}
	void on_timer() noexcept
	{
		c->fired++;
		if (native_handle()->expires > twheel_now(c->w))
			c->early++;
	}
};

// The C++ kinds' timed loops, over tw::Timer or HookTimer.
template <class T>
NOINLINE void timed_timer_add_cancel(std::vector<T> &ts, const AddCancelInput &in)
{
	const std::size_t n = in.expiry.size();
	for (std::size_t i = 0; i < n; i++)
		ts[i].arm_at(kStart + in.expiry[i]);
	for (std::size_t i = 0; i < n; i++)
		ts[in.order[i]].cancel();
}

template <class T>
NOINLINE void timed_timer_rearm(tw::Wheel &w, std::vector<T> &ts, std::size_t n, std::size_t m)
{
	Rng r{42};
	tw::tick_t now = kStart;
	for (std::size_t k = 1; k <= m; k++) {
		ts[r.below(n)].arm_at(now + kRearmDelay);
		if (k % 1000 == 0)
			w.advance(++now);
	}
}

// c: a tw::Timer whose lambda captures the Counters.
struct CppTimerTraits {
	using Handle = tw::Timer;
	static constexpr const char *name = "C++ Timer";
	static auto callback(Counters *c)
	{
		return [c](tw::Timer &self) {
			c->fired++;
			if (self.native_handle()->expires > twheel_now(c->w))
				c->early++;
		};
	}
	static void emplace(std::vector<tw::Timer> &ts, tw::Wheel &w, Counters *c)
	{
		static_assert(tw::Timer::stores_inline<decltype(callback(nullptr))>);
		static_assert(sizeof(decltype(callback(nullptr))) == sizeof(void *));
		ts.emplace_back(w, callback(c));
	}
};

// d: a HookTimer holding the Counters.
struct CppHookTraits {
	using Handle = HookTimer;
	static constexpr const char *name = "C++ hook";
	static void emplace(std::vector<HookTimer> &ts, tw::Wheel &w, Counters *c) { ts.emplace_back(w, c); }
};

// A C++ kind: Traits::Handle the handle, Traits::emplace() constructs one.
template <class Traits>
struct CppKind {
	using T = typename Traits::Handle;

	static Sample add_cancel(const AddCancelInput &in)
	{
		const std::size_t n = in.expiry.size();
		tw::Wheel w(kStart);
		Counters c;
		c.w = w.native_handle();
		std::vector<T> ts;
		ts.reserve(n);
		for (std::size_t i = 0; i < n; i++)
			Traits::emplace(ts, w, &c);
		const Stamp t0 = now_ns();
		timed_timer_add_cancel(ts, in);
		const Stamp t1 = now_ns();
		if (w.size() != 0 || c.fired != 0)
			fail((std::string(Traits::name) + " add_cancel").c_str());
		return per_op(t0, t1, n);
	}

	static Sample rearm(std::size_t n, std::size_t m)
	{
		tw::Wheel w(kStart);
		Counters c;
		c.w = w.native_handle();
		std::vector<T> ts;
		ts.reserve(n);
		for (std::size_t i = 0; i < n; i++) {
			Traits::emplace(ts, w, &c);
			ts.back().arm_at(kStart + kRearmDelay);
		}
		const Stamp t0 = now_ns();
		timed_timer_rearm(w, ts, n, m);
		const Stamp t1 = now_ns();
		if (c.early != 0 || w.size() + static_cast<std::size_t>(c.fired) != n)
			fail((std::string(Traits::name) + " rearm").c_str());
		return per_op(t0, t1, m);
	}
};
using CppTimer = CppKind<CppTimerTraits>;
using CppHook = CppKind<CppHookTraits>;

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

struct Kind {
	char key;
	const char *name;
	std::size_t bytes;
	Sample (*add_cancel)(const AddCancelInput &);
	Sample (*rearm)(std::size_t, std::size_t);
	Series ac, re, ac_cpu, re_cpu;
};

void print(const char *workload, const char *unit, std::size_t n, std::size_t m, std::vector<Kind> &kinds,
	   Series Kind::*which)
{
	std::printf("%s (N=%zu%s%s):\n", workload, n, m ? ", M=" : "", m ? std::to_string(m).c_str() : "");
	const Kind *a = nullptr, *b = nullptr;
	for (const Kind &k : kinds) {
		if (k.key == 'a')
			a = &k;
		if (k.key == 'b')
			b = &k;
	}
	for (const Kind &k : kinds) {
		const Series &s = k.*which;
		std::printf("  %c %-12s %3zu B  reps=%zu  median %7.2f  min-max %7.2f-%7.2f  ns/%s", k.key, k.name,
			    k.bytes, s.v.size(), s.median(), s.min(), s.max(), unit);
		if (a && &k != a)
			std::printf("  /a %.3f", s.median() / (a->*which).median());
		if (b && &k != b && &k != a)
			std::printf("  /b %.3f", s.median() / (b->*which).median());
		std::printf("\n");
	}
}

// What the command line asks for.
struct Options {
	std::size_t n = 1'000'000, m = 10'000'000, reps = 7;
	std::string only = "abcde", workload = "both";
	bool do_ac = false, do_re = false;
};

// Reads the command line into @o. Returns 0, or 2 after a usage error
// (message printed).
int parse_args(int argc, char **argv, Options &o)
{
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		if (a == "--quick") {
			o.n = 10'000;
			o.m = 100'000;
			o.reps = 3;
		} else if (a == "--reps" && i + 1 < argc) {
			o.reps = std::strtoul(argv[++i], nullptr, 10);
		} else if (a == "--n" && i + 1 < argc) {
			o.n = std::strtoul(argv[++i], nullptr, 10);
		} else if (a == "--m" && i + 1 < argc) {
			o.m = std::strtoul(argv[++i], nullptr, 10);
		} else if (a == "--only" && i + 1 < argc) {
			o.only = argv[++i];
		} else if (a == "--workload" && i + 1 < argc) {
			o.workload = argv[++i];
		} else {
			std::fprintf(stderr,
				     "usage: %s [--quick] [--reps R] [--n N] [--m M] [--only abcde] "
				     "[--workload add_cancel|rearm|both]\n",
				     argv[0]);
			return 2;
		}
	}
	if (o.n == 0 || o.m == 0 || o.reps == 0) {
		std::fprintf(stderr, "bench_cpp: N, M and reps must be positive\n");
		return 2;
	}
	o.do_ac = o.workload == "both" || o.workload == "add_cancel";
	o.do_re = o.workload == "both" || o.workload == "rearm";
	return 0;
}

// The kinds of timer object whose key is in @only, in the order a-e.
std::vector<Kind> select_kinds(const std::string &only)
{
	std::vector<Kind> all = {
		{'a', "C bare", sizeof(CTimerT<sizeof(tw_timer)>), &CBare<sizeof(tw_timer)>::add_cancel,
		 &CBare<sizeof(tw_timer)>::rearm, {}, {}, {}, {}},
		{'b', "C +ctx", sizeof(CCtxTimer), &CCtx::add_cancel, &CCtx::rearm, {}, {}, {}, {}},
		{'c', "C++ Timer", sizeof(tw::Timer), &CppTimer::add_cancel, &CppTimer::rearm, {}, {}, {}, {}},
		{'d', "C++ hook", sizeof(HookTimer), &CppHook::add_cancel, &CppHook::rearm, {}, {}, {}, {}},
		{'e', "C padded", sizeof(CTimerT<sizeof(tw::Timer)>), &CBare<sizeof(tw::Timer)>::add_cancel,
		 &CBare<sizeof(tw::Timer)>::rearm, {}, {}, {}, {}},
	};
	std::vector<Kind> kinds;
	for (Kind &k : all)
		if (only.find(k.key) != std::string::npos)
			kinds.push_back(k);
	return kinds;
}

// The repetitions of each workload over every kind; the samples go into
// @kinds.
void run_reps(const Options &o, std::vector<Kind> &kinds)
{
	const AddCancelInput in = make_add_cancel(o.n);
	const std::size_t kn = kinds.size();
	for (std::size_t r = 0; r < o.reps; r++) {
		// rotate the order so that no kind always runs first (or warm)
		for (std::size_t j = 0; j < kn; j++) {
			Kind &k = kinds[(r + j) % kn];
			if (o.do_ac) {
				const Sample x = k.add_cancel(in);
				k.ac.v.push_back(x.wall);
				k.ac_cpu.v.push_back(x.cpu);
			}
		}
		for (std::size_t j = 0; j < kn; j++) {
			Kind &k = kinds[(r + j) % kn];
			if (o.do_re) {
				const Sample x = k.rearm(o.n, o.m);
				k.re.v.push_back(x.wall);
				k.re_cpu.v.push_back(x.cpu);
			}
		}
	}
}

// The figures of every workload run, by wall time and by CPU time.
void print_all(const Options &o, std::vector<Kind> &kinds)
{
	if (o.do_ac) {
		print("add_cancel, wall time", "pair", o.n, 0, kinds, &Kind::ac);
		print("add_cancel, thread CPU time", "pair", o.n, 0, kinds, &Kind::ac_cpu);
	}
	if (o.do_re) {
		print("rearm, wall time", "rearm", o.n, o.m, kinds, &Kind::re);
		print("rearm, thread CPU time", "rearm", o.n, o.m, kinds, &Kind::re_cpu);
	}
	std::printf("(ratios are of medians; rearm: N live timers, M re-arms, one advance per 1,000)\n");
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	if (const int ret = parse_args(argc, argv, o))
		return ret;
	std::vector<Kind> kinds = select_kinds(o.only);
	if (kinds.empty() || (!o.do_ac && !o.do_re)) {
		std::fprintf(stderr, "bench_cpp: nothing to run\n");
		return 2;
	}
	std::printf("bench_cpp: twheel %s, sizeof(tw_timer)=%zu, sizeof(tw::Timer)=%zu, "
		    "sizeof(tw::TimerHook<>)=%zu\n",
		    twheel_version(), sizeof(struct tw_timer), sizeof(tw::Timer),
		    sizeof(tw::TimerHook<HookTimer>));
	run_reps(o, kinds);
	if (g_failed)
		return 1;
	print_all(o, kinds);
	return 0;
}
