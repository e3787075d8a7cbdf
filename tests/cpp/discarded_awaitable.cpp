// SPDX-License-Identifier: MIT
// A co_await forgotten must NOT compile with -Werror: the awaitables of
// <twheel/co.hpp> are [[nodiscard]], so the compiler warns about
// `tw::co::sleep_for(loop, d);` (which would not sleep: made and dropped).
// GCC 12 warns of a call's value (-DSLEEP_FOR); clang++ also of a
// temporary its constructor makes (the others); -DTASK drops a task. Each
// warning says why (C++20's reason). Without one, it compiles, with
// sleep_until(), io() and submit() with a time point of any duration of
// the loop clock; of another clock (-DOTHER_CLOCK) each is an error whose
// message says what to do (it was "no matching function"; io()'s and
// submit()'s with a floating-point duration too).
#include <twheel/co.hpp>

using namespace std::chrono_literals;

tw::co::task<> f(tw::Loop &loop)
{
#if SLEEP_FOR
	tw::co::sleep_for(loop, 1ms);
#elif SLEEP_UNTIL
	tw::co::sleep_until(loop, loop.clock_now());
#elif RESUME_ON
	tw::co::resume_on{loop};
#elif IO
	tw::co::io(loop, [](io_uring_sqe &) {});
#endif
#if TASK
	f(loop); // a task made and dropped: never run
#endif
#if OTHER_CLOCK
	co_await tw::co::sleep_until(loop, std::chrono::system_clock::now());
	co_await tw::co::io(loop, [](io_uring_sqe &s) { io_uring_prep_nop(&s); }, std::chrono::system_clock::now());
	loop.submit([](io_uring_sqe &s) { io_uring_prep_nop(&s); }, std::chrono::system_clock::now(),
		    [](const io_uring_cqe &) {});
#endif
	// a deadline of any duration of the loop clock, as sleep_until()'s
	using dsec = std::chrono::duration<double>;
	const std::chrono::time_point<std::chrono::steady_clock, dsec> soon(loop.clock_now() + 1ms);
	co_await tw::co::io(loop, [](io_uring_sqe &s) { io_uring_prep_nop(&s); }, soon);
	co_await tw::co::io(loop, [](io_uring_sqe &s) { io_uring_prep_nop(&s); }, loop.clock_now() + dsec(0.5));
	loop.submit([](io_uring_sqe &s) { io_uring_prep_nop(&s); }, soon, [](const io_uring_cqe &) {});
	co_await tw::co::io(loop, [](io_uring_sqe &s) { io_uring_prep_nop(&s); }, loop.clock_now()); // and the loop's own
	co_await tw::co::sleep_until(loop, std::chrono::time_point_cast<std::chrono::milliseconds>(loop.now()));
	co_await tw::co::sleep_until(loop, std::chrono::time_point<std::chrono::steady_clock, std::chrono::duration<double>>());
	co_await tw::co::sleep_until(loop, {}); // the loop clock's epoch
	co_await tw::co::sleep_for(loop, 1ms);
}

int main()
{
	tw::Loop loop;
	tw::co::spawn(loop, f(loop));
	return 0;
}
