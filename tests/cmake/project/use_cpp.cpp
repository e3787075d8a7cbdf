// twheel::twheel-uring++: the C++ headers compile as C++17 with the target's
// flags alone, and the C libraries link.
#include <twheel/fn.hpp>
#include <twheel/loop.hpp>
#include <twheel/timer.hpp>
#include <twheel/twheel.hpp>

#include <cstdio>

static_assert(__cplusplus >= 201703L, "twheel::twheel++ asks for C++17");

int main()
{
	std::printf("use_cpp: libtwheel %s\n", twheel_version());
	return twheel_version_number() >= 10000 ? 0 : 1;
}
