// asio_test - tw::AsioHost (<twheel/asio.hpp>) on a real io_context: no
// timer before its deadline on CLOCK_MONOTONIC, each exactly once, re-arms
// and cancels from callbacks, an earlier timer moves the steady_timer
// earlier, io_context::run() returns once the wheel is empty (no wait left
// outstanding), destruction cancels pending timers (on_cancel), a wait
// still outstanding when the host is destroyed does nothing, and the host
// may be destroyed from its own callback with timers pending.
#include <twheel/asio.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <time.h>
#include <vector>

#include "../common/run_delay.h"

using namespace std::chrono_literals;

namespace {

std::uint64_t mono_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The io_context thread's run queue time at each arm and each fire: how
// late a timer is, less the time that thread waited for a CPU (the
// scheduler's, on a busy machine), is what "grossly late" bounds.
run_delay_log rdl;

// A record with an intrusive timer on the host (tw::Hook).
struct Rec : tw::Hook<tw::AsioHost, Rec> {
	std::uint64_t deadline = 0;
	std::uint64_t fired_at = 0;
	std::uint64_t own_late = 0; // at the last fire, less the CPU waits
	int fired = 0;
	int cancelled = 0;
	int rearms = 0;             // re-arm itself this many more times (5 ms)
	Rec *victim = nullptr;      // cancel when firing

	void on_timer()
	{
		const std::uint64_t rd0 = thread_run_delay();
		fired_at = mono_ns();
		const std::uint64_t rd = thread_run_delay();
		fired++;
		EXPECT_GE(fired_at, deadline) << "fired early";
		if (fired_at >= deadline)
			own_late = run_delay_own_late(&rdl, deadline, fired_at, rd);
		run_delay_add(&rdl, fired_at, rd0);
		if (victim) {
			EXPECT_TRUE(victim->cancel());
		}
		if (rearms > 0) {
			rearms--;
			fired = 0;
			deadline = mono_ns() + 5000000;
			EXPECT_FALSE(arm_in(5ms));
		}
	}
	void on_cancel() { cancelled++; }
	void arm(tw::AsioHost &h, std::chrono::milliseconds d)
	{
		if (!*this)
			static_cast<Hook &>(*this) = Hook(h);
		run_delay_mark(&rdl);
		deadline = mono_ns() + static_cast<std::uint64_t>(d.count()) * 1000000u;
		arm_in(d);
	}
};

TEST(AsioHost, NeverEarlyEachOnceAndRunReturnsWhenEmpty)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	std::vector<Rec> r(200);
	rdl.n = rdl.dropped = 0;
	for (std::size_t i = 0; i < r.size(); i++)
		r[i].arm(h, std::chrono::milliseconds(1 + (i * 7) % 60));
	const auto t0 = mono_ns();
	io.run(); // returns only once nothing is outstanding: the wheel emptied
	EXPECT_LT(mono_ns() - t0, 5000000000u);
	for (auto &x : r) {
		EXPECT_EQ(x.fired, 1);
		EXPECT_LE(x.own_late, 200000000u) << "grossly late: " << (x.fired_at - x.deadline) / 1000000
						  << " ms, " << x.own_late / 1000000 << " ms less the CPU waits";
	}
	EXPECT_EQ(twheel_count(twheel_host_wheel(h.get())), 0u);
	EXPECT_EQ(rdl.dropped, 0);
}

TEST(AsioHost, CallbacksRearmAndCancel)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec a, b, victim;
	a.rearms = 3;
	b.victim = &victim;
	a.arm(h, 2ms);
	b.arm(h, 3ms);
	victim.arm(h, 40ms);
	io.run();
	EXPECT_EQ(a.fired, 1);
	EXPECT_EQ(a.rearms, 0);
	EXPECT_EQ(b.fired, 1);
	EXPECT_EQ(victim.fired, 0);
}

TEST(AsioHost, EarlierTimerMovesTheWaitEarlier)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec late, early;
	rdl.n = rdl.dropped = 0;
	late.arm(h, 300ms);
	io.poll(); // placed: the steady_timer waits for it
	early.arm(h, 5ms);
	while (!early.fired && io.run_one()) {
	}
	// the early one must not wait for the late one's wait (295 ms later):
	// its lateness less the thread's CPU waits (a stall of the machine's,
	// which may also have let the late one come due)
	EXPECT_EQ(early.fired, 1);
	EXPECT_LE(early.own_late, 100000000u) << "the wait stayed the late one's: " << (early.fired_at - early.deadline) / 1000000
					      << " ms late, " << early.own_late / 1000000 << " ms less the CPU waits";
	if (late.fired) // only after the CPU waits let its deadline pass too
		EXPECT_LE(late.own_late, 100000000u);
	else
		EXPECT_TRUE(late.cancel());
	io.restart();
	const std::uint64_t t0 = mono_ns(), rd0 = thread_run_delay();
	io.run(); // the cancel emptied the wheel: nothing outstanding
	const std::uint64_t took = mono_ns() - t0, waited = thread_run_delay() - rd0;
	EXPECT_LT(took - std::min(took, waited), 100000000u) << "run() waited " << took / 1000000 << " ms, "
							      << waited / 1000000 << " ms of it for a CPU";
	EXPECT_LE(late.fired, 1);
	EXPECT_EQ(rdl.dropped, 0);
}

TEST(AsioHost, WaitOutstandingAtDestructionDoesNothing)
{
	boost::asio::io_context io;
	Rec r;
	{
		tw::AsioHost h(io);
		r.arm(h, 1ms);
		std::this_thread::sleep_for(20ms); // due, but the io_context has not run
	}                                          // destroyed with its wait outstanding
	io.run(); // the aborted wait must not touch the destroyed host (ASan would say so)
	EXPECT_EQ(r.fired, 0);
	EXPECT_FALSE(r.pending());
	EXPECT_EQ(r.cancelled, 1);
}

// The io_context destroyed before its AsioHost (not allowed, but done):
// the host notices (its Asio service's shutdown), every arm after it
// throws ESHUTDOWN instead of posting to the freed io_context (a
// heap-use-after-free before), a cancel still works, and the host's
// destructor cancels what was pending, once. Two hosts on one io_context,
// one destroyed before the io_context: its leaving the list is safe.
TEST(AsioHost, IoContextDestroyedFirstRefusesArms)
{
	auto io = std::make_unique<boost::asio::io_context>();
	auto h = std::make_unique<tw::AsioHost>(*io);
	{
		tw::AsioHost early(*io); // leaves the io_context's list of hosts first
		Rec e;
		e.arm(early, 10s);
	}
	Rec a, b, c;
	a.arm(*h, 50ms);
	b.arm(*h, 60ms); // parked: a placement is posted
	io->run_one();   // places b
	c.arm(*h, 70ms);
	io.reset();
	try {
		b.arm_in(1ms); // earlier than the wait: re-arms it
		ADD_FAILURE() << "an arm after the io_context was destroyed did not throw";
	} catch (const tw::error &e) {
		EXPECT_EQ(e.code().value(), ESHUTDOWN);
		EXPECT_STREQ(e.what(), "tw: the event loop is stopped or gone"); // not "the loop is stopped"
	}
	EXPECT_TRUE(b.pending()); // refused: left as it was
	Rec d;
	try {
		d.arm(*h, 100ms);
		ADD_FAILURE() << "an arm after the io_context was destroyed did not throw";
	} catch (const tw::error &e) {
		EXPECT_EQ(e.code().value(), ESHUTDOWN);
	}
	EXPECT_FALSE(d.pending());
	EXPECT_TRUE(c.cancel());
	EXPECT_EQ(h->size(), 2u);
	h.reset();
	EXPECT_EQ(a.cancelled, 1); // by the destructor
	EXPECT_EQ(b.cancelled, 1);
	EXPECT_EQ(c.cancelled, 1); // by cancel()
	EXPECT_EQ(d.cancelled, 0);
	EXPECT_EQ(a.fired + b.fired + c.fired + d.fired, 0);
}

TEST(AsioHost, DestructionCancelsPendingTimersOnce)
{
	boost::asio::io_context io;
	std::vector<Rec> r(10);
	int g = 0;
	tw::Timer<tw::AsioHost> t;
	{
		tw::AsioHost h(io);
		for (auto &x : r)
			x.arm(h, 10s);
		t = h.after(10s, [] {});
		t.on_cancel([&g] { g++; });
	}
	EXPECT_EQ(g, 1);
	EXPECT_FALSE(t);
	EXPECT_THROW(t.arm_in(1ms), tw::error);
	for (auto &x : r) {
		EXPECT_EQ(x.cancelled, 1);
		EXPECT_FALSE(x.pending());
		EXPECT_FALSE(x.cancel());
	}
	io.run(); // nothing outstanding
	for (auto &x : r)
		EXPECT_EQ(x.fired, 0);
}

TEST(AsioHost, OwningTimersPeriodicAndFireAndForget)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	int once = 0, ticks = 0, forgotten = 0;
	auto t = h.after(2ms, [&] { once++; });
	auto p = h.every(3ms, [&](tw::Timer<tw::AsioHost> &self) {
		if (++ticks == 4)
			self.cancel();
	});
	h.call_after(1ms, [&] { forgotten++; });
	io.run(); // returns once the periodic timer stopped: nothing pending
	EXPECT_EQ(once, 1);
	EXPECT_EQ(ticks, 4);
	EXPECT_EQ(forgotten, 1);
	EXPECT_FALSE(p.pending());
}

// A host moves as a Wheel and a Loop do: its timers and its wait go with
// it, the moved-from one is empty (arming through it throws EINVAL, its
// queries give zero and nullptr), and a move assignment closes the target
// first (its timers cancelled once) and takes the source's. It did not
// compile ("implicitly-deleted copy constructor").
TEST(AsioHost, MovesAsEveryOwnerDoes)
{
	boost::asio::io_context io;
	std::optional<tw::AsioHost> a(std::in_place, io);
	int fired = 0, gone = 0;
	Rec r;
	r.arm(*a, 3ms);
	auto t = a->after(2ms, [&] { fired++; });
	tw::AsioHost b(std::move(*a));
	EXPECT_EQ(a->size(), 0u);
	EXPECT_EQ(a->get(), nullptr);
	EXPECT_EQ(a->resume(), -EINVAL);
	EXPECT_EQ(a->now(), tw::AsioHost::time_point{});
	EXPECT_THROW(tw::Timer<tw::AsioHost>(*a, [] {}), tw::error);
	a.reset(); // destroying the moved-from one touches nothing
	EXPECT_EQ(b.size(), 2u);
	EXPECT_TRUE(t.pending() && r.pending());
	tw::AsioHost c(io);
	auto doomed = c.after(1ms, [&] { fired += 100; });
	doomed.on_cancel([&] { gone++; });
	c = std::move(b);
	EXPECT_EQ(gone, 1);
	EXPECT_FALSE(doomed); // its owner was closed
	EXPECT_EQ(b.size(), 0u);
	EXPECT_EQ(c.size(), 2u);
	io.run(); // the wait moved with the host: both run, then run() returns
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(r.fired, 1);
	EXPECT_EQ(gone, 1);
	EXPECT_EQ(c.size(), 0u);
}

TEST(AsioHost, StrandOfAMultiThreadedContext)
{
	boost::asio::io_context io;
	auto strand = boost::asio::make_strand(io);
	tw::AsioHost h(strand);
	std::vector<Rec> r(50);
	boost::asio::post(strand, [&] {
		for (std::size_t i = 0; i < r.size(); i++)
			r[i].arm(h, std::chrono::milliseconds(1 + i % 20));
	});
	std::thread other([&] { io.run(); });
	io.run();
	other.join();
	for (auto &x : r)
		EXPECT_EQ(x.fired, 1);
}

// An empty executor is a misuse like an empty callable: tw::error EINVAL
// (it let Asio's bad_executor out), nothing made.
TEST(AsioHost, EmptyExecutorIsRefused)
{
	try {
		tw::AsioHost h{boost::asio::any_io_executor()};
		ADD_FAILURE() << "a host on an empty executor was made";
	} catch (const tw::error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
		EXPECT_STREQ(e.what(), "tw: the executor is empty");
	}
}

TEST(AsioHost, ChronoIsRoundedUpAndSaturated)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec r;
	r.arm(h, 0ms);
	// a negative delay is 0: due at once, never before the call
	r.deadline = mono_ns();
	r.arm_in(-5ms);
	io.run();
	EXPECT_EQ(r.fired, 1);
	// a huge one saturates: pending, far away, no busy loop
	r.arm_in(std::chrono::hours::max());
	EXPECT_EQ(io.run_for(30ms), 0u);
	EXPECT_EQ(r.fired, 1);
	EXPECT_TRUE(r.cancel());
}

} // namespace

// Destroyed from one of its timers' callbacks with a timer pending: the
// rule of every owner, the pending timer is cancelled when the run returns
// (it used to print and abort).
TEST(AsioHost, DestroyedFromItsOwnCallback)
{
	boost::asio::io_context io;
	auto host = std::make_unique<tw::AsioHost>(io);
	int fired = 0;
	auto k = host->after(1ms, [&] {
		fired++;
		host.reset();
	});
	Rec far;
	far.arm(*host, 1h);
	io.run_for(10s); // returns once no work is left: at once when the host is gone
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(host, nullptr);
	EXPECT_FALSE(far.pending());
	EXPECT_EQ(far.cancelled, 1);
	EXPECT_EQ(far.fired, 0);
	EXPECT_FALSE(k);
	io.run(); // nothing outstanding
}

namespace {

// An object that owns an AsioHost and its timers, and deletes itself from
// one of them ("delete this"). With @tidy its destructor cancels its
// idle timer first; without, the idle timer is still pending then.
struct Conn {
	tw::AsioHost host;
	tw::Timer<tw::AsioHost> bye, idle;
	bool tidy;
	int *gone;
	Conn(boost::asio::io_context &io, bool tidy, int *gone)
		: host(io), bye(host, [this] { delete this; }), idle(host, [] {}), tidy(tidy), gone(gone)
	{
	}
	~Conn()
	{
		if (tidy)
			idle.cancel();
		++*gone;
	}
};

void delete_this(bool tidy)
{
	boost::asio::io_context io;
	int gone = 0;
	auto *c = new Conn(io, tidy, &gone);
	c->bye.arm_in(1ms);
	c->idle.arm_in(1h);
	io.run(); // returns once the host is gone
	EXPECT_EQ(gone, 1);
}

// A session outliving its server: a C tw_timer could not know its host was
// gone (ASan heap-use-after-free in host.del()); the hook knows.
struct Server {
	tw::AsioHost host;
	explicit Server(boost::asio::io_context &io) : host(io) {}
};

} // namespace

// The idiom with the owner's timers cancelled in its destructor: ASan and
// LSan clean, io_context::run() returns.
TEST(AsioHost, DeleteThisFromACallbackAfterCancellingItsTimers)
{
	delete_this(true);
}

// The idiom with a timer still pending: the timer is a member of the
// freed object, so it unlinks itself; nothing aborts (it used to), nothing
// touches freed memory (ASan).
TEST(AsioHost, DeleteThisFromACallbackWithATimerPending)
{
	delete_this(false);
}

TEST(AsioHost, ATimerOutlivingItsHostIsGuarded)
{
	boost::asio::io_context io;
	Rec session;
	{
		Server s(io);
		session.arm(s.host, 1h);
	}
	EXPECT_FALSE(session);
	EXPECT_FALSE(session.cancel()); // used to be host.del() on freed memory
	EXPECT_THROW(session.arm_in(1ms), tw::error);
	io.run();
}

// ---- Arms by delay outside a run: parked, placed by one posted handler ----

namespace {

// An injected clock (ns) that counts its readings; with a strand set, every
// reading must be made inside it.
std::uint64_t fake_ns;
unsigned reads;
const boost::asio::strand<boost::asio::io_context::executor_type> *in_strand;

std::uint64_t fake_clock(void *)
{
	reads++;
	if (in_strand) {
		EXPECT_TRUE(in_strand->running_in_this_thread()) << "a clock reading outside the strand";
	}
	return in_strand ? mono_ns() : fake_ns;
}

// A timer on the injected clock: must not run before @deadline.
struct Fake : tw::Hook<tw::AsioHost, Fake> {
	using Hook::Hook;
	std::uint64_t deadline = 0;
	int fired = 0;
	void on_timer()
	{
		fired++;
		EXPECT_GE(fake_ns, deadline) << "fired early";
	}
};

twheel_rt fake_rt(std::uint64_t start)
{
	twheel_rt rt;
	fake_ns = start;
	twheel_rt_init(&rt, 1000000, fake_clock, nullptr);
	return rt;
}

// Runs @io until @x fired, the clock standing at fake_ns (the steady_timer
// waits in real time for what the injected clock says remains).
void run_until(boost::asio::io_context &io, const Fake &x, std::chrono::milliseconds d)
{
	io.restart();
	for (auto end = std::chrono::steady_clock::now() + d; !x.fired && std::chrono::steady_clock::now() < end;)
		io.run_one_for(5ms);
}

// @x does not fire with the clock 1 ns before its deadline, and fires at it.
void expect_fires_at_deadline(boost::asio::io_context &io, const Fake &x)
{
	fake_ns = x.deadline - 1;
	run_until(io, x, 20ms);
	EXPECT_EQ(x.fired, 0);
	fake_ns = x.deadline;
	run_until(io, x, 2s);
	EXPECT_EQ(x.fired, 1);
}

} // namespace

// Arms by delay while a timer is pending read no clock; one posted handler
// places them from one reading taken after the last of them (the clock
// moved on after the first: the second counts from later, not from the
// first's time), and the 64th arm places the batch at once.
TEST(AsioHostDefer, OneReadingAfterTheArmsNeverEarly)
{
	boost::asio::io_context io;
	const twheel_rt rt = fake_rt(1000000000);
	tw::AsioHost h(io, &rt);
	Fake far(h), a(h), b(h);
	far.arm_in(1h); // the host timer is armed: later arms are parked
	reads = 0;
	a.arm_in(10ms);
	fake_ns += 5000000; // the clock moves on between the two arms
	b.arm_in(10ms);
	EXPECT_EQ(reads, 0u);
	EXPECT_TRUE(a.pending() && b.pending());
	EXPECT_EQ(io.poll_one(), 1u); // the placement
	EXPECT_EQ(reads, 1u);
	a.deadline = b.deadline = fake_ns + 10000000; // from the placement's reading
	EXPECT_EQ(a.expiry(), b.expiry());
	fake_ns = b.deadline - 1000000; // a placement read at the first arm says due
	run_until(io, a, 50ms);
	EXPECT_EQ(a.fired + b.fired, 0);
	fake_ns = b.deadline;
	run_until(io, b, 2s);
	EXPECT_EQ(a.fired, 1);
	EXPECT_EQ(b.fired, 1);

	// 100 arms: the 64th places the batch (one reading), one handler the rest
	std::vector<Fake> r;
	r.reserve(100);
	for (int i = 0; i < 100; i++)
		r.emplace_back(h);
	far.arm_in(1h);
	reads = 0;
	for (auto &x : r)
		x.arm_in(1s);
	EXPECT_EQ(reads, 1u);
	io.restart();
	io.poll(); // the placement (and the wait the batch's re-arm aborted)
	EXPECT_EQ(reads, 2u);
	EXPECT_EQ(h.size(), 101u);
}

// expiry() of a timer parked by delay (not placed yet) is the tick a
// placement at the host's latest reading gives, the one the placement then
// gives with the clock standing still; not the parked delay read as a tick.
TEST(AsioHostDefer, ExpiryWhileParkedIsItsTick)
{
	boost::asio::io_context io;
	const twheel_rt rt = fake_rt(3000000000);
	tw::AsioHost h(io, &rt);
	Fake far(h), a(h);
	far.arm_in(1h);
	a.arm_in(5ms);
	const auto due = tw::AsioHost::time_point(std::chrono::nanoseconds(fake_ns + 5000000));
	EXPECT_EQ(a.expiry(), due);
	EXPECT_EQ(io.poll_one(), 1u); // the placement, the clock standing still
	EXPECT_EQ(a.expiry(), due);
}

// A timer cancelled while parked, or cancelled by the host's destruction
// while parked, keeps the tick expiry() gave it: not its delay read as a
// tick, nor the slot a hint put it in.
struct Noted : tw::Hook<tw::AsioHost, Noted> {
	using Hook::Hook;
	tw::AsioHost::time_point at{};
	void on_timer() {}
	void on_cancel() { at = expiry(); }
};

TEST(AsioHostDefer, ExpiryOfATimerCancelledWhileParkedIsItsTick)
{
	boost::asio::io_context io;
	const twheel_rt rt = fake_rt(3000000000);
	std::optional<tw::AsioHost> h(std::in_place, io, &rt);
	Noted far(*h), a(*h), b(*h), c(*h);
	far.arm_in(1h);
	a.arm_in(5ms);  // parked on the list: a delay under 256 ticks
	b.arm_in(10s);  // parked in place, in the slot of its hint
	c.arm_in(20ms);
	const auto in = [](std::uint64_t ns) { return tw::AsioHost::time_point(std::chrono::nanoseconds(fake_ns + ns)); };
	EXPECT_EQ(a.expiry(), in(5000000));
	EXPECT_EQ(b.expiry(), in(10000000000));
	EXPECT_TRUE(a.cancel());
	EXPECT_TRUE(b.cancel());
	EXPECT_EQ(a.expiry(), in(5000000));
	EXPECT_EQ(b.expiry(), in(10000000000));
	EXPECT_EQ(a.at, in(5000000));
	h.reset(); // c is still parked: handed back with its tick
	EXPECT_EQ(c.at, in(20000000));
}

// Timers moved while parked (on the list, and in place in the slot of
// their hint): the moved-to handles are placed, at the same expiry(), and
// fire once each, not before their delay from the placement's reading;
// the moved-from ones are not pending and run nothing.
TEST(AsioHostDefer, MovedWhileParkedFireOnceNeverEarly)
{
	boost::asio::io_context io;
	const twheel_rt rt = fake_rt(4000000000);
	tw::AsioHost h(io, &rt);
	Fake far(h), a(h), b(h);
	far.arm_in(1h);
	a.arm_in(5ms); // parked on the list
	b.arm_in(300ms); // parked in place (over 256 ticks)
	const auto due_a = a.expiry(), due_b = b.expiry();
	Fake a2(std::move(a)), b2(h);
	b2 = std::move(b);
	EXPECT_FALSE(a.pending() || b.pending());
	EXPECT_TRUE(a2.pending() && b2.pending());
	EXPECT_EQ(h.size(), 3u);
	EXPECT_EQ(a2.expiry(), due_a);
	EXPECT_EQ(b2.expiry(), due_b);
	fake_ns += 1000000; // the placement reads 1 ms later
	EXPECT_EQ(io.poll_one(), 1u);
	a2.deadline = fake_ns + 5000000;
	b2.deadline = fake_ns + 300000000;
	EXPECT_EQ(a2.expiry(), tw::AsioHost::time_point(std::chrono::nanoseconds(a2.deadline)));
	EXPECT_EQ(b2.expiry(), tw::AsioHost::time_point(std::chrono::nanoseconds(b2.deadline)));
	expect_fires_at_deadline(io, a2);
	expect_fires_at_deadline(io, b2);
	EXPECT_EQ(a.fired + b.fired, 0);
	EXPECT_TRUE(far.cancel());
}

// The clock stands still, or steps back, between the arm and the
// placement: the delay counts from the placement's reading all the same.
TEST(AsioHostDefer, ClockStandingStillOrSteppingBack)
{
	boost::asio::io_context io;
	const twheel_rt rt = fake_rt(2000000000);
	tw::AsioHost h(io, &rt);
	Fake far(h), still(h), back(h);
	far.arm_in(1h);
	still.arm_in(3ms);
	still.deadline = fake_ns + 3000000;
	io.poll();
	back.arm_in(10ms);
	fake_ns -= 2000000; // 2 ms back before the placement
	back.deadline = fake_ns + 10000000;
	io.poll();
	expect_fires_at_deadline(io, still);
	expect_fires_at_deadline(io, back);
}

// io_context::run_one() users: the first handler run is the placement
// (the one clock reading), then the timer fires.
TEST(AsioHostDefer, RunOnePlacesFirst)
{
	boost::asio::io_context io;
	const twheel_rt rt = fake_rt(3000000000);
	tw::AsioHost h(io, &rt);
	Fake far(h), near(h);
	far.arm_in(1h);
	reads = 0;
	near.arm_in(2ms);
	EXPECT_EQ(reads, 0u);
	EXPECT_EQ(io.run_one(), 1u);
	EXPECT_EQ(reads, 1u);
	near.deadline = fake_ns = fake_ns + 2000000;
	for (int i = 0; i < 10 && !near.fired; i++)
		io.run_one();
	EXPECT_EQ(near.fired, 1);
	EXPECT_TRUE(far.cancel());
	io.run();
}

// Destroyed with its placement handler queued: the handler does nothing
// (ASan would report a use of the freed state), the parked timer is
// cancelled once.
TEST(AsioHostDefer, PlacementOutlivingTheHost)
{
	boost::asio::io_context io;
	Rec far, near;
	{
		tw::AsioHost h(io);
		far.arm(h, 1h);
		near.arm(h, 1ms); // parked, its placement posted
	}
	EXPECT_EQ(far.cancelled, 1);
	EXPECT_EQ(near.cancelled, 1);
	io.run();
	EXPECT_EQ(near.fired, 0);
	EXPECT_FALSE(near.pending());
}

// A host on a strand of an io_context run by two threads: arms from the
// strand are placed by a handler posted to it (every clock reading is made
// inside the strand), never early, each once.
TEST(AsioHostDefer, PlacementOnAStrand)
{
	boost::asio::io_context io;
	auto strand = boost::asio::make_strand(io);
	twheel_rt rt;
	twheel_rt_init(&rt, 1000000, fake_clock, nullptr);
	std::vector<Rec> r(50);
	std::unique_ptr<tw::AsioHost> h;
	boost::asio::post(strand, [&] {
		in_strand = &strand;
		h = std::make_unique<tw::AsioHost>(strand, &rt);
		for (std::size_t i = 0; i < r.size(); i++)
			r[i].arm(*h, std::chrono::milliseconds(1 + i % 20));
	});
	std::thread other([&] { io.run(); });
	io.run();
	other.join();
	boost::asio::post(strand, [&] { h.reset(); });
	io.restart();
	io.run();
	in_strand = nullptr;
	for (auto &x : r)
		EXPECT_EQ(x.fired, 1);
}
