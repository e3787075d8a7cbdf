// SPDX-License-Identifier: MIT
// loop_server.cpp's idle-timeout echo server with coroutines (docs/cpp.md):
// one accepts (single-shot accepts), one per connection echoes with its idle
// deadline on each request, one reads a signalfd. -EBUSY (a full SQ) is
// retried 1 ms later, as is a request without memory for its record
// (-ENOMEM); a connection without memory for its coroutine is closed. Exits 77 where
// io_uring is refused. Its stats line's idle_late_us: how far past its deadline,
// by the loop's clock, its latest idle close came.
// usage: co_server [--idle-ms MS] [--entries N] [--max-conns N] [--seconds S] [PORT]
#include <twheel/co.hpp>

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unordered_set>

using namespace std::chrono_literals;

namespace { // GCC 12: a lambda prep in a coroutine frame needs internal linkage

struct Options { unsigned long port = 0, idle_ms = 10000, entries = 0, max_conns = 0, seconds = 0; };

struct Server {
	tw::Loop &loop;
	int lfd, sfd;
	std::chrono::milliseconds idle_ms;
	unsigned long max_conns;
	std::unordered_set<int> fds{}; // open connections
	bool stopping = false, quitting = false;
	int status = 0;
	unsigned long accepted = 0, idle = 0, eof = 0, errors = 0, at_stop = 0, backoffs = 0, retries = 0;
	std::chrono::nanoseconds idle_late{}; // the latest idle close, past its deadline

	// A result worth trying again 1 ms later: a full SQ, or transient.
	bool retry(int r)
	{
		retries += r == -EBUSY;
		return r == -EBUSY || r == -EAGAIN || r == -EINTR || r == -ENOBUFS || r == -ENOMEM;
	}

	// Serves @fd; without the memory for it, closes it (an error).
	void serve(int fd) noexcept
	{
		try {
			fds.insert(fd);
			tw::co::spawn(loop, echo(fd));
		} catch (const std::bad_alloc &) {
			fds.erase(fd);
			::close(fd);
			errors++;
		}
	}

	tw::co::task<void> accept()
	{
		while (!stopping) {
			const int r = co_await tw::co::io(loop, [this](io_uring_sqe &sqe) {
				io_uring_prep_accept(&sqe, lfd, nullptr, nullptr, SOCK_CLOEXEC);
			});
			if (r >= 0 && ++accepted && stopping) { // quit() while in flight
				at_stop++;
				::close(r);
			} else if (r >= 0) {
				serve(r);
				stopping = max_conns && accepted == max_conns; // serve those, no more
			} else if (r == -EMFILE || r == -ENFILE || r == -ENOBUFS || r == -ENOMEM) {
				backoffs++; // out of fds or memory: accept again later
				co_await tw::co::sleep_for(loop, 100ms);
			} else if (retry(r)) {
				co_await tw::co::sleep_for(loop, 1ms);
			} else if (r != -ECONNABORTED) {
				std::fprintf(stderr, "accept: %s\n", std::strerror(-r));
				status = 1;
				quit();
			}
		}
		done();
	}

	// Echoes @fd until it is silent for idle_ms, ends, fails, or quit().
	tw::co::task<void> echo(int fd)
	{
		char buf[4096];
		std::size_t len = 0, sent = 0; // received bytes, echoed bytes
		auto deadline = loop.clock_now() + idle_ms;
		for (;;) {
			const bool send = sent < len;
			const int r = co_await tw::co::io(loop, [&](io_uring_sqe &sqe) {
				send ? io_uring_prep_send(&sqe, fd, buf + sent, len - sent, MSG_NOSIGNAL)
				     : io_uring_prep_recv(&sqe, fd, buf, sizeof buf, 0);
			}, deadline);
			if (!quitting && retry(r)) {
				co_await tw::co::sleep_for(loop, 1ms);
				continue;
			}
			if (r == -ETIME && !quitting)
				idle_late = std::max(idle_late, loop.clock_now() - deadline);
			if (quitting || r == -ETIME || (r <= 0 && !(send && r == 0))) {
				(quitting ? at_stop : r == -ETIME ? idle : r == 0 ? eof : errors)++;
				break;
			}
			len = send ? len : static_cast<std::size_t>(r);
			sent = send ? sent + static_cast<std::size_t>(r) : 0;
			deadline = loop.clock_now() + idle_ms; // activity: O(1) re-arm
		}
		::close(fd);
		fds.erase(fd);
		done();
	}

	// Reads SIGINT, SIGTERM or --seconds' SIGALRM, then quit().
	tw::co::task<void> signals()
	{
		signalfd_siginfo si;
		for (int r; (r = co_await tw::co::io(loop, [&](io_uring_sqe &sqe) {
			     io_uring_prep_read(&sqe, sfd, &si, sizeof si, 0);
		     })) != static_cast<int>(sizeof si);)
			if (!retry(r))
				co_return; // stopping: cancelled as the loop goes
			else
				co_await tw::co::sleep_for(loop, 1ms);
		std::printf("signal %u: shutting down\n", si.ssi_signo);
		quit();
	}

	// Stop accepting; shutdown() ends each connection's request in flight.
	void quit()
	{
		stopping = quitting = true;
		for (int fd : fds)
			::shutdown(fd, SHUT_RDWR);
		done();
	}

	// Once stopping and every connection closed: the loop stops; ~Loop
	// destroys the coroutines still suspended (the accept, the signal read).
	void done()
	{
		if (stopping && fds.empty())
			loop.stop();
	}
};

bool parse(int argc, char **argv, Options &o)
{
	const auto number = [](const char *s, unsigned long max, unsigned long &out) {
		const auto [end, ec] = std::from_chars(s, s + std::strlen(s), out);
		return ec == std::errc() && !*end && out <= max;
	};
	static const option longs[] = {{"idle-ms", 1, nullptr, 'i'}, {"entries", 1, nullptr, 'e'},
				       {"max-conns", 1, nullptr, 'm'}, {"seconds", 1, nullptr, 's'}, {}};
	for (int ch; (ch = getopt_long(argc, argv, "", longs, nullptr)) != -1;)
		if (!(ch == 'i'   ? number(optarg, 86400000, o.idle_ms) && o.idle_ms
		      : ch == 'e' ? number(optarg, 32768, o.entries)
		      : ch == 'm' ? number(optarg, ~0ul, o.max_conns)
				  : ch == 's' && number(optarg, 86400, o.seconds)))
			return false;
	return argc - optind <= 1 && (optind == argc || number(argv[optind], 65535, o.port));
}

// Serves on 127.0.0.1:@o.port (prints the port) until SIGINT, SIGTERM,
// --seconds (SIGALRM: the three read from a signalfd) or --max-conns.
int serve(const Options &o)
{
	tw::loop_options lo;
	lo.entries = static_cast<unsigned>(o.entries);
	tw::Loop loop(lo);
	if (loop.features() & TW_LOOP_FEAT_FALLBACK)
		return std::puts("skipped: io_uring is refused here, the loop runs on epoll (no I/O requests)"), 77;
	sockaddr_in a{AF_INET, htons(static_cast<std::uint16_t>(o.port)), {htonl(INADDR_LOOPBACK)}, {}};
	socklen_t len = sizeof a;
	sigset_t set;
	sigemptyset(&set);
	for (int sig : {SIGINT, SIGTERM, SIGALRM})
		sigaddset(&set, sig);
	const int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	const int sfd = sigprocmask(SIG_BLOCK, &set, nullptr) ? -1 : signalfd(-1, &set, SFD_CLOEXEC);
	if (lfd < 0 || sfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a) || listen(lfd, SOMAXCONN) ||
	    getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &len))
		return std::perror("listen on 127.0.0.1, or signalfd"), 1;
	std::printf("listening on 127.0.0.1:%u\n", ntohs(a.sin_port));
	std::fflush(stdout);
	Server s{loop, lfd, sfd, std::chrono::milliseconds(o.idle_ms), o.max_conns};
	tw::co::spawn(loop, s.accept());
	tw::co::spawn(loop, s.signals());
	alarm(static_cast<unsigned>(o.seconds)); // 0: none
	loop.run(); // until done() stops it: every connection closed
	std::printf("stats: accepted=%lu idle=%lu eof=%lu errors=%lu at_stop=%lu backoffs=%lu retries=%lu "
		    "idle_late_us=%lld\n", s.accepted, s.idle, s.eof, s.errors, s.at_stop, s.backoffs, s.retries,
		    static_cast<long long>(s.idle_late.count() / 1000));
	::close(lfd);
	::close(sfd);
	return s.status;
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	if (!parse(argc, argv, o))
		return std::fprintf(stderr, "usage: %s [--idle-ms MS] [--entries N] [--max-conns N] "
				    "[--seconds S] [PORT]\n", argv[0]), 2;
	const auto open_fds = [] { return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), {}); };
	const long before = open_fds();
	if (rlimit rl; getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rl.rlim_cur = rl.rlim_max)) // an fd a connection
		setrlimit(RLIMIT_NOFILE, &rl);
	try {
		const int status = serve(o);
		const long after = open_fds();
		std::printf("fds: %ld open at start, %ld at exit\n", before, after);
		return status ? status : after == before ? 0 : 1;
	} catch (const std::exception &e) {
		return std::fprintf(stderr, "co_server: %s\n", e.what()), 1;
	}
}
