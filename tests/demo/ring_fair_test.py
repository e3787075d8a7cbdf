#!/usr/bin/env python3
"""tests/demo/ring_fair_test.py - peers that flood cannot keep the
provided-buffer ring's buffers from the other connections.

usage: ring_fair_test.py SERVER NAME [--stall-once]

The server (idle-server-c or idle-server) runs with a provided-buffer
ring of one buffer and a 1 s idle timeout, in HTTP mode and in echo
mode. 200 flooders (a process of their own) each send pipelined
requests (lines) 8 KiB at a time, as fast as the server takes them, and
read what comes back, for 5 s; meanwhile 20 well-behaved connections
each send one request (line) every 200 ms once the answer to the last
is in. For 4 s no connection, well-behaved or flooding, may be closed:
none is silent for a timeout. (A well-behaved connection closed less than
a timeout after its last request was sent was closed early, whatever the
machine's delays: the server's timer counts from its read of that
request. Closed later, or sent a request a timeout or more after this
process might have seen the answer before it (or, the first, after it
called connect(): the server's timer may start before
create_connection() returns), or the flooders' process stalled for half
the timeout, the run says nothing: run again, 3 tries, else skip. So
do flooders closed when the server itself was kept from its CPU for
half the timeout (its STATS: its longest loop iteration, busy_max_us,
or how late the iterations that ran its timers began, wake_max_us). An
answer the server was slow to give is not excused.)

A buffer given back went to the ring, for the connection woken for it
to take; but a flooder's receive, issued again with data waiting, took
it first, turn after turn: in HTTP mode 14 to 17 of the 20 connections,
and the flooders themselves, were closed as idle, their requests
unread. Now the buffer is handed to the connection waiting longest.
After SIGTERM the server must exit 0 with no connection and no timer
left.
With --stall-once the first run sleeps past the timeout before the
first requests (this process kept off its CPU): that run must be called
inconclusive, not failed, and the next one pass; in HTTP mode only (the
echo mode's run would be the plain test's own, on the same server).
Exit 0 pass, 1 fail, 77 skip (io_uring or the provided-buffer ring refused,
or three runs stalled).
"""
import os
import re
import select
import selectors
import socket
import subprocess
import sys
import time

from demo_proc import ready_port, stop_clean

server_path, name = sys.argv[1], sys.argv[2]
stall_test = stall_once = sys.argv[3:] == ["--stall-once"]
NFLOOD, NGOOD, PERIOD, IDLE, SECS = 200, 20, 0.2, 1.0, 4.0


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


def flood(socks, line, secs):
    """Send @line pipelined on each of @socks, 8 KiB at a time, as fast
    as each takes it, and read what comes back, for @secs. Returns how
    many the server closed, or 255 if this process stalled for half the
    timeout (then a close may be right: what it had sent was read)."""
    sel = selectors.DefaultSelector()
    for f in socks:
        f.setblocking(False)
        sel.register(f, selectors.EVENT_READ | selectors.EVENT_WRITE)
    chunk = line * (8192 // len(line))
    closed = 0
    end = last = time.monotonic()
    end += secs
    stalled = False
    while last < end:
        for key, ev in sel.select(0.1):
            try:
                if ev & selectors.EVENT_READ and not key.fileobj.recv(1 << 16):
                    closed += 1
                    sel.unregister(key.fileobj)
                    continue
                if ev & selectors.EVENT_WRITE:
                    key.fileobj.send(chunk)
            except BlockingIOError:
                pass
            except ConnectionError:
                closed += 1
                sel.unregister(key.fileobj)
        now = time.monotonic()
        stalled = stalled or now - last > IDLE / 2
        last = now
    return 255 if stalled else closed


def run(mode):
    http = mode == "--http"
    line = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n" if http else b"hello\n"
    end_of = b"\r\n\r\n" if http else line
    srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", str(int(IDLE * 1000)), "--ring-bufs", "1"]
                           + ([mode] if mode else []),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    port = ready_port(srv, name, fail, r"ready: listening on 127\.0\.0\.1:(\d+),",
                      skip="no provided-buffer ring", log=log)
    what = "HTTP" if http else "echo"
    problems, stalls, worst, answered, pid, flooders_closed = [], [], 0.0, 0, 0, 0
    try:
        # quiet_from: a reading before the last request was sent (or the
        # connect: the server arms its timer after it), from which a
        # close is judged; heard: one before the last answer (or the
        # connect) came in, from which this process's own silence counts
        good, quiet_from = [], {}
        for _ in range(NGOOD):
            t = time.monotonic()
            good.append(socket.create_connection(("127.0.0.1", port)))
            quiet_from[good[-1]] = t
        heard = dict(quiet_from)
        floods = [socket.create_connection(("127.0.0.1", port)) for _ in range(NFLOOD)]
        pid = os.fork()
        if pid == 0:
            os._exit(min(flood(floods, line, SECS + 1.0), 255))
        for f in floods:
            f.close()
        time.sleep(0.3)  # the flood under way
        if stall_once:
            time.sleep(IDLE + 0.3)  # a timeout and more, before the first request
        sent_at, got = {}, {g: b"" for g in good}
        next_at = {g: time.monotonic() + PERIOD * i / NGOOD for i, g in enumerate(good)}
        end = time.monotonic() + SECS
        selected = time.monotonic()  # before the last select(): what it missed came later
        while time.monotonic() < end and not problems and not stalls:
            now = time.monotonic()
            for g in good:
                if g not in sent_at and now >= next_at[g]:
                    before = time.monotonic()
                    g.send(line)
                    if time.monotonic() - heard[g] >= IDLE:
                        # silent a timeout by itself: the server may have
                        # closed it before this request came in
                        stalls.append(f"{what}: this process sent a request a timeout after its connect or the answer before")
                        break
                    sent_at[g] = quiet_from[g] = before
            if stalls:
                break  # its close, if it comes, is not judged
            missed, selected = selected, time.monotonic()
            r, _, _ = select.select(good, [], [], 0.01)
            now = time.monotonic()
            for g in r:
                try:
                    d = g.recv(4096)
                except ConnectionError:
                    d = b""
                if d:
                    got[g] += d
                    if got[g].endswith(end_of):
                        worst = max(worst, now - sent_at.pop(g))
                        heard[g] = max(missed, quiet_from[g])
                        answered += 1
                        got[g] = b""
                        next_at[g] = now + PERIOD
                    continue
                # Closed. The server's timer counts from its read of the last
                # request, which came after our send: a close seen less than
                # a timeout after that send was early. Seen later, this
                # process may have stalled past the timeout itself.
                quiet = now - quiet_from[g]
                (problems if quiet < IDLE else stalls).append(
                    f"{what}: a well-behaved connection closed {quiet:.3f} s after its last request"
                    + (" (unanswered)" if g in sent_at else ""))
                break
        _, status = os.waitpid(pid, 0)
        pid = 0
        flooders_closed = os.waitstatus_to_exitcode(status)
        if flooders_closed == 255:
            stalls.append(f"{what}: the flooders' process stalled for half the timeout")
        for g in good:
            g.close()
    finally:
        if pid:
            os.waitpid(pid, 0)
        stats = stop_clean(srv, log, fail)
    refusals = re.search(r" nobufs=(\d+)", stats)
    # The server's own lag, from its STATS: its longest loop iteration
    # (busy_max_us) and how late the iterations that ran its timers began
    # (wake_max_us). Half a timeout or more, and the server handed no
    # buffer on for that long at once, kept from its CPU (a few ms of its
    # own work an iteration, else): a flooder it then could not read
    # within the timeout says nothing about the order it hands them on in.
    lag = [int(m.group(1)) / 1000 for k in ("busy", "wake") if (m := re.search(rf" {k}_max_us=(\d+)", stats))]
    lag_ms = max(lag) if len(lag) == 2 else None
    if flooders_closed and flooders_closed != 255 and not problems:
        closed = f"{what}: {flooders_closed} of the {NFLOOD} flooders closed while they sent"
        if lag_ms is not None and lag_ms >= IDLE * 1000 / 2:
            stalls.append(f"{closed}, the server itself held up {lag_ms:.0f} ms")
        else:
            problems.append(closed)
    print(f"{what}: {answered} requests answered, the slowest in {worst * 1000:.0f} ms; "
          f"{refusals.group(1) if refusals else '?'} refusals; the server held up "
          f"{'?' if lag_ms is None else f'{lag_ms:.0f}'} ms at most")
    if problems:
        fail(f"{problems[0]} ({stats.strip()})")
    return stalls


def run_valid(mode):
    """run(@mode) until a run in which neither this process nor the
    flooders' stalled past what the verdict needs, 3 tries."""
    global stall_once
    for _ in range(3):
        stalled_here, stalls = stall_once, run(mode)
        stall_once = False
        if stalled_here and not stalls:
            fail("a run stalled past the timeout before its first request was not called inconclusive")
        if not stalls:
            return
        print(f"inconclusive, run again: {stalls[0]}")
    print(f"SKIP [{name}]: 3 runs inconclusive (the machine stalled this test past the timeout)")
    sys.exit(77)


run_valid("--http")
if not stall_test:
    run_valid(None)
print(f"PASS [{name}]")
