#!/usr/bin/env python3
"""tests/demo/ring_wake_test.py - the connections waiting for a provided
buffer are woken one for each buffer free, first come first served, and
none is left waiting.

usage: ring_wake_test.py SERVER NAME

The server (idle-server-c or idle-server) runs with a provided-buffer
ring of one buffer and a 10 s idle timeout. A receive waits for its
socket to be readable, then takes a buffer; one that finds the ring
empty fails ENOBUFS and waits on the starved list, woken when a buffer
is given back.

1. Lost wake-ups (echo mode). Each of four rounds opens 100 connections,
   stops the server (SIGSTOP), has every other one send a line and the
   others end (a FIN in rounds 1 and 3, an RST in rounds 2 and 4), then
   lets the server go on (SIGCONT). The end of a stream or a reset makes
   a socket readable too, so the ends' receives wait for the buffer as
   well; woken, such a receive takes none (the kernel puts it back in the
   ring). Its wake-up was lost: every connection behind it waited, its
   line unread, until its idle timer closed it (in runs before the fix,
   up to 49 of 50 lines a round). Every line's echo must come within 3 s.
2. The herd (HTTP mode). 200 connections each send a request while the
   server is stopped. Each receive is refused once, then must wait its
   turn: the server must count at most 400 refusals (nobufs) and answer
   every request within 3 s. It woke every waiting receive whenever the
   buffer came back, which HTTP's replies (sent out of a buffer of their
   own) do at once: all but one were refused again, each time, about
   4,100 refusals for the 200 (and under a flood of requests from 200
   connections, millions a second: 20 other connections, one request
   every 100 ms, were all closed as idle with their requests unread).

After SIGTERM the server must exit 0 with no connection and no timer left.
Exit 0 pass, 1 fail, 77 skip (io_uring or the provided-buffer ring refused).
"""
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

from demo_proc import ready_port, stop_clean

server_path, name = sys.argv[1], sys.argv[2]
WITHIN = 3.0


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


def start(mode):
    srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", "10000", "--ring-bufs", "1"] + mode,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    port = ready_port(srv, name, fail, r"ready: listening on 127\.0\.0\.1:(\d+),",
                      skip="no provided-buffer ring", log=log)
    return srv, port, log


def answers(talkers, complete, what):
    """Read each of @talkers until complete(bytes) or the end, WITHIN s
    in all; fail unless every one completed. Returns the time taken."""
    start = time.monotonic()
    got = {s: b"" for s in talkers}
    waiting = set(talkers)
    while waiting and time.monotonic() - start < WITHIN:
        r, _, _ = select.select(list(waiting), [], [], max(0.0, WITHIN - (time.monotonic() - start)))
        for s in r:
            data = s.recv(256)
            got[s] += data
            if not data or complete(got[s]):
                waiting.discard(s)
    bad = [got[s] for s in talkers if not complete(got[s])]
    if bad:
        fail(f"{what}: {len(bad)} of {len(talkers)} not answered within {WITHIN:.0f} s "
             f"(got {bad[0]!r}): left waiting for the buffer")
    return time.monotonic() - start


def lost_wakeups():
    srv, port, log = start([])
    try:
        for rnd in range(4):
            how = "FIN" if rnd % 2 == 0 else "RST"
            socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
            time.sleep(0.2)  # all accepted, each receive waiting for data
            srv.send_signal(signal.SIGSTOP)  # every line and end there at once when it runs again
            talkers = []
            for i, s in enumerate(socks):
                if i % 2 == 0:
                    s.send(b"hello\n")
                    talkers.append(s)
                elif how == "FIN":
                    s.shutdown(socket.SHUT_WR)
                else:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.close()
            srv.send_signal(signal.SIGCONT)
            took = answers(talkers, lambda b: b == b"hello\n", f"round {rnd + 1} ({how}): lines")
            for s in socks:
                s.close()
            print(f"round {rnd + 1} ({how}): {len(talkers)} lines echoed, the last after {took:.3f} s")
    finally:
        stop_clean(srv, log, fail)


def herd():
    n = 200
    srv, port, log = start(["--http"])
    try:
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
        time.sleep(0.2)
        srv.send_signal(signal.SIGSTOP)
        for s in socks:
            s.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        srv.send_signal(signal.SIGCONT)
        took = answers(socks, lambda b: b.endswith(b"\r\n\r\n"), "requests")
        for s in socks:
            s.close()
    finally:
        last = stop_clean(srv, log, fail)
    m = re.search(r" nobufs=(\d+) ", last)
    if not m or int(m.group(1)) > 2 * n:
        fail(f"{n} requests at once: {m.group(1) if m else '?'} receives refused a buffer, not at most "
             f"{2 * n}: the waiting ones all woken each time the buffer came back")
    print(f"herd: {n} requests answered, the last after {took:.3f} s, {m.group(1)} refusals")


lost_wakeups()
herd()
print(f"PASS [{name}]")
