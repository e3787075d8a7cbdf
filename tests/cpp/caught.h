// SPDX-License-Identifier: MIT
//
// Caught: what the exceptions a callback threw said. handler() is an
// exception handler (tw::exception_handler) to give a Wheel, Loop or host;
// each std::exception that reaches it leaves its what() in @what, in
// order, for the test to check. Header-only.
#ifndef TWHEEL_TESTS_CPP_CAUGHT_H
#define TWHEEL_TESTS_CPP_CAUGHT_H

#include <twheel/fn.hpp>

#include <exception>
#include <string>
#include <vector>

struct Caught {
	std::vector<std::string> what;
	tw::exception_handler handler()
	{
		return [this](std::exception_ptr e) {
			try {
				std::rethrow_exception(e);
			} catch (const std::exception &x) {
				what.push_back(x.what());
			}
		};
	}
};

#endif
