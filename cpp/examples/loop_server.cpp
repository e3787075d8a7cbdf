// SPDX-License-Identifier: MIT
// A TCP echo server with idle timeouts on tw::Loop (docs/cpp.md, "A TCP server
// with idle timeouts"). One multishot accept, re-armed whenever the kernel
// ends it; per connection one request in flight (a recv, or the send of what
// it received) and one tw::Timer<tw::Loop> re-armed on activity; SIGINT/SIGTERM
// read from a signalfd. Exits 77 where io_uring is refused, or its multishot
// accept (before Linux 5.19).
//
// usage: loop_server [--idle-ms MS] [--entries N] [--max-conns N] [--seconds S] [PORT]
#include <twheel/loop.hpp>

#include <liburing.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

struct Options {
	unsigned long port = 0;      // 0: any
	unsigned long idle_ms = 10000;
	unsigned long entries = 0;   // SQ entries, 0: the loop's default
	unsigned long max_conns = 0; // serve this many connections, then exit
	unsigned long seconds = 0;   // shut down after this long
};

struct Conn {
	int fd;
	bool busy = false;         // a recv or a send in flight
	bool closing = false;      // close once nothing is in flight
	std::size_t len = 0, sent = 0; // received bytes, echoed bytes
	tw::Timer<tw::Loop> idle;
	char buf[4096];
};

class Server {
public:
	Server(tw::Loop &loop, int lfd, int sfd, const Options &o)
		: loop_(loop), lfd_(lfd), sfd_(sfd), idle_(o.idle_ms), max_conns_(o.max_conns)
	{
		retry_ = tw::Timer(loop, [this] { resume(); });
		backoff_ = tw::Timer(loop, [this] { resume(); });
		if (o.seconds)
			deadline_ = loop.after(std::chrono::seconds(o.seconds), [this] { quit(); });
		accept_arm();
		signal_arm();
	}
	int status = 0;
	unsigned long accepted = 0, idle = 0, eof = 0, errors = 0, at_stop = 0;
	unsigned long rearms = 0, backoffs = 0, retries = 0;
	std::chrono::nanoseconds idle_late{}; // the latest idle close, past its expiry

	// Stop accepting and close every connection; the loop stops once
	// nothing is in flight.
	void quit()
	{
		stopping_ = true;
		std::vector<Conn *> all;
		for (auto &kv : conns_)
			all.push_back(kv.second.get());
		for (Conn *c : all)
			if (!c->closing) {
				at_stop++;
				close_conn(*c);
			}
		done();
	}

private:
	// submit() unless the submission queue is full (EBUSY) or there is no
	// memory for the request: then false, and resume() runs 1 ms later.
	template <class P, class H>
	bool submit(P &&prep, H &&handler, std::uint64_t *key = nullptr)
	{
		try {
			const std::uint64_t k = loop_.submit(std::forward<P>(prep), std::forward<H>(handler));
			if (key)
				*key = k;
			return true;
		} catch (const std::system_error &e) {
			if (e.code().value() != EBUSY)
				throw;
		} catch (const std::bad_alloc &) {
		}
		retries++;
		retry_.arm_in(std::chrono::milliseconds(1));
		return false;
	}

	void accept_arm()
	{
		accepting_ = submit([this](io_uring_sqe &sqe) {
			io_uring_prep_multishot_accept(&sqe, lfd_, nullptr, nullptr, SOCK_CLOEXEC);
		}, [this](const io_uring_cqe &cqe) { on_accept(cqe); }, &accept_key_);
	}

	void on_accept(const io_uring_cqe &cqe)
	{
		if (cqe.res >= 0)
			add(cqe.res); // the last CQE may carry a connection too
		if (cqe.flags & IORING_CQE_F_MORE)
			return;
		accepting_ = false; // the kernel ended the request
		if (stopping_)
			return done();
		if (cqe.res == -EMFILE || cqe.res == -ENFILE || cqe.res == -ENOBUFS || cqe.res == -ENOMEM) {
			backoffs++; // out of fds or memory: accept again later, not at once
			backoff_.arm_in(std::chrono::milliseconds(100));
		} else if (cqe.res >= 0 || cqe.res == -ECONNABORTED || cqe.res == -EINTR || cqe.res == -EAGAIN) {
			rearms++;
			accept_arm();
		} else {
			std::fprintf(stderr, "accept: %s\n", std::strerror(-cqe.res));
			status = cqe.res == -EINVAL && !accepted ? 77 : 1; // EINVAL: before 5.19
			quit();
		}
	}

	void add(int fd)
	{
		accepted++;
		if (stopping_) {
			at_stop++;
			::close(fd);
			return;
		}
		Conn *p;
		try {
			auto c = std::make_unique<Conn>();
			p = c.get();
			p->fd = fd;
			p->idle = tw::Timer(loop_, [this, p] {
				idle++;
				idle_late = std::max(idle_late, loop_.clock_now() - p->idle.expiry());
				close_conn(*p);
			});
			conns_.emplace(fd, std::move(c));
		} catch (const std::bad_alloc &) {
			errors++; // no memory for this one: close it, serve the others
			::close(fd);
			return;
		}
		p->idle.arm_in(idle_);
		io(*p);
		if (max_conns_ && accepted == max_conns_) {
			stopping_ = true; // serve those, accept no more
			done();
		}
	}

	// The next request of @c: the rest of its echo, or a recv.
	void io(Conn &c)
	{
		if (c.busy)
			return;
		if (c.closing)
			return finish(c);
		if (c.sent < c.len)
			c.busy = submit([&c](io_uring_sqe &sqe) {
				io_uring_prep_send(&sqe, c.fd, c.buf + c.sent, c.len - c.sent, MSG_NOSIGNAL);
			}, [this, &c](const io_uring_cqe &cqe) { done_io(c, cqe.res, true); });
		else
			c.busy = submit([&c](io_uring_sqe &sqe) {
				io_uring_prep_recv(&sqe, c.fd, c.buf, sizeof c.buf, 0);
			}, [this, &c](const io_uring_cqe &cqe) { done_io(c, cqe.res, false); });
		if (!c.busy)
			later_.push_back(c.fd);
	}

	void done_io(Conn &c, int res, bool send)
	{
		c.busy = false;
		if (c.closing)
			return finish(c);
		if (res == -EAGAIN || res == -ENOBUFS || res == -EINTR || res == -ENOMEM) {
			later_.push_back(c.fd); // transient: again in 1 ms
			retry_.arm_in(std::chrono::milliseconds(1));
			return;
		}
		if (res <= 0 && !(send && res == 0)) {
			(res == 0 ? eof : errors)++;
			return finish(c);
		}
		if (send) {
			c.sent += static_cast<std::size_t>(res);
		} else {
			c.len = static_cast<std::size_t>(res);
			c.sent = 0;
		}
		c.idle.arm_in(idle_); // activity: O(1) re-arm
		io(c);
	}

	// Idle, EOF, error or shutdown: shutdown() completes the request in
	// flight (the kernel does not cancel it on close()), finish() closes.
	void close_conn(Conn &c)
	{
		c.closing = true;
		c.idle.cancel();
		if (c.busy)
			::shutdown(c.fd, SHUT_RDWR);
		else
			finish(c);
	}

	void finish(Conn &c)
	{
		::close(c.fd);
		conns_.erase(c.fd); // destroys c and cancels its idle timer
		done();
	}

	void signal_arm()
	{
		reading_signals_ = submit([this](io_uring_sqe &sqe) {
			io_uring_prep_read(&sqe, sfd_, &si_, sizeof si_, 0);
		}, [this](const io_uring_cqe &cqe) {
			reading_signals_ = false;
			if (cqe.res == static_cast<int>(sizeof si_)) {
				std::printf("signal %u: shutting down\n", si_.ssi_signo);
				quit();
			} else if (!stopping_) {
				signal_arm();
			} else {
				done();
			}
		}, &signal_key_);
	}

	// Whatever waited for a free SQE or a back-off, then done().
	void resume()
	{
		for (int fd : std::exchange(later_, {})) {
			const auto it = conns_.find(fd); // gone, or another by then: io() checks
			if (it != conns_.end())
				io(*it->second);
		}
		if (!stopping_ && !accepting_ && !backoff_.pending())
			accept_arm();
		if (!stopping_ && !reading_signals_)
			signal_arm();
		done();
	}

	// Once stopping: cancel the accept, wait for the connections, cancel
	// the signal read, then stop the loop (only a cancel request may still
	// be in flight: ~Loop frees its handler).
	void done()
	{
		if (!stopping_)
			return;
		backoff_.cancel();
		if (accepting_)
			return cancel(accept_key_, accept_cancelled_);
		if (!conns_.empty())
			return;
		if (reading_signals_)
			return cancel(signal_key_, signal_cancelled_);
		deadline_.cancel();
		retry_.cancel();
		loop_.stop();
	}

	void cancel(std::uint64_t key, bool &sent)
	{
		if (!sent)
			sent = submit([key](io_uring_sqe &sqe) { io_uring_prep_cancel64(&sqe, key, 0); },
				      [](const io_uring_cqe &) {});
	}

	tw::Loop &loop_;
	int lfd_, sfd_;
	std::chrono::milliseconds idle_;
	unsigned long max_conns_;
	std::unordered_map<int, std::unique_ptr<Conn>> conns_;
	std::vector<int> later_; // connections waiting for a free SQE
	tw::Timer<tw::Loop> retry_, backoff_, deadline_;
	signalfd_siginfo si_;
	std::uint64_t accept_key_ = 0, signal_key_ = 0;
	bool accepting_ = false, reading_signals_ = false, stopping_ = false;
	bool accept_cancelled_ = false, signal_cancelled_ = false;
};

bool number(const char *s, unsigned long max, unsigned long &out)
{
	char *end;
	errno = 0;
	out = std::strtoul(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end && !errno && out <= max;
}

bool parse(int argc, char **argv, Options &o)
{
	static const option longs[] = {{"idle-ms", required_argument, nullptr, 'i'},
				       {"entries", required_argument, nullptr, 'e'},
				       {"max-conns", required_argument, nullptr, 'm'},
				       {"seconds", required_argument, nullptr, 's'},
				       {nullptr, 0, nullptr, 0}};
	for (int ch; (ch = getopt_long(argc, argv, "", longs, nullptr)) != -1;) {
		const bool ok = ch == 'i'   ? number(optarg, 86400000, o.idle_ms) && o.idle_ms
				: ch == 'e' ? number(optarg, 32768, o.entries)
				: ch == 'm' ? number(optarg, ~0ul, o.max_conns)
				: ch == 's' && number(optarg, 86400, o.seconds);
		if (!ok)
			return false;
	}
	return argc - optind <= 1 && (optind == argc || number(argv[optind], 65535, o.port));
}

int open_fds()
{
	int n = -1; // the directory's own fd
	if (DIR *d = opendir("/proc/self/fd")) {
		while (const dirent *e = readdir(d))
			n += e->d_name[0] != '.';
		closedir(d);
	}
	return n;
}

// A listening socket on 127.0.0.1:@port.
int listen_on(unsigned long port)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(static_cast<std::uint16_t>(port));
	socklen_t len = sizeof a;
	const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	const int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) || listen(fd, SOMAXCONN) ||
	    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len)) {
		std::perror("listen on 127.0.0.1");
		std::exit(1);
	}
	return fd;
}

// The port of the listening socket @fd, for the "listening" line.
unsigned port_of(int fd)
{
	sockaddr_in a{};
	socklen_t len = sizeof a;
	getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
	return ntohs(a.sin_port);
}

// SIGINT and SIGTERM, blocked, as a descriptor to read on the loop.
int signals()
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	const int fd = sigprocmask(SIG_BLOCK, &set, nullptr) ? -1 : signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0) {
		std::perror("signalfd");
		std::exit(1);
	}
	return fd;
}

struct Fd {
	int fd;
	~Fd() { ::close(fd); }
};

int serve(const Options &o)
{
	tw::loop_options lo;
	lo.entries = static_cast<unsigned>(o.entries);
	tw::Loop loop(lo);
	if (loop.features() & TW_LOOP_FEAT_FALLBACK) {
		std::puts("skipped: io_uring is refused here, the loop runs on epoll (no I/O requests)");
		return 77;
	}
	const Fd sfd{signals()}, lfd{listen_on(o.port)}; // closed after ~Server
	Server s(loop, lfd.fd, sfd.fd, o);
	loop.run_once(false); // submits the accept: a kernel that refuses it says so now
	if (!s.status) {
		std::printf("listening on 127.0.0.1:%u\n", port_of(lfd.fd));
		std::fflush(stdout);
	}
	loop.run(); // until done() stops it: every fd closed, every timer cancelled
	twheel_loop_stats st{};
	twheel_loop_get_stats(loop.native_handle(), &st);
	std::printf("stats: accepted=%lu idle=%lu eof=%lu errors=%lu at_stop=%lu rearms=%lu backoffs=%lu "
		    "retries=%lu multishot_ends=%llu cq_overflows=%llu idle_late_us=%lld\n",
		    s.accepted, s.idle, s.eof, s.errors, s.at_stop, s.rearms, s.backoffs, s.retries,
		    static_cast<unsigned long long>(st.multishot_ends),
		    static_cast<unsigned long long>(st.cq_overflows),
		    static_cast<long long>(s.idle_late.count() / 1000));
	return s.status;
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	if (!parse(argc, argv, o)) {
		std::fprintf(stderr, "usage: %s [--idle-ms MS] [--entries N] [--max-conns N] [--seconds S] [PORT]\n",
			     argv[0]);
		return 2;
	}
	const int before = open_fds();
	rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max; // one fd per connection
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	try {
		const int status = serve(o);
		if (status == 77)
			return status;
		const int after = open_fds();
		std::printf("fds: %d open at start, %d at exit\n", before, after);
		return status ? status : after == before ? 0 : 1;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "loop_server: %s\n", e.what());
		return 1;
	}
}
