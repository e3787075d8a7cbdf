#!/usr/bin/env python3
"""tests/demo/ring_hold_test.py - a client that never reads holds none of
the provided-buffer ring's buffers, which every connection reads into.

usage: ring_hold_test.py SERVER NAME

The server (idle-server-c or idle-server) runs with a provided-buffer
ring of one buffer and a 10 s idle timeout, in echo mode, in
heartbeat mode (whose PONGs went out of the buffer the PINGs came in,
written over them: a full read can complete more PINGs than its bytes
hold PONGs, and under ASan this flood showed them written past it),
and in HTTP mode (whose replies, shared, move to a buffer of the
connection's own when the socket cannot take them: a client that does
not read must not hold a copy, whose Date could then not move on):

  1. a client floods the server and never reads, with a small receive
     buffer, until the server stops reading it (our sends stall): the
     echo (the PONGs) of its last read cannot go out;
  2. three idle connections are opened, then one that sends a line.

The line's echo (its PONG) must come within 1 s, the flooding client
still connected. It did not while the server sent the echo out of the
provided buffer and waited: one client that never read held the buffer,
no other connection's bytes were read (no activity: each was closed as
idle, while it talked) until the flooder's own idle timeout; with the
default 1,024 buffers, 1,024 such clients did that to every other. A
send that the socket cannot take at once now moves its rest to a buffer
of the connection's own and gives the ring's back. After SIGTERM the
server must exit 0 with no connection and no timer left.
Exit 0 pass, 1 fail, 77 skip (io_uring or the provided-buffer ring refused).
"""
import re
import select
import socket
import subprocess
import sys
import time

from demo_proc import ready_port, stop_clean

server_path, name = sys.argv[1], sys.argv[2]


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


def run(mode):
    line, reply = (b"PING\n", b"PONG\n") if mode == "--heartbeat" else (b"hello\n", b"hello\n")
    if mode == "--http":  # the reply's Date field is the second it was made
        line = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
        reply = re.compile(rb"HTTP/1\.1 204 No Content\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n"
                           rb"Connection: keep-alive\r\n\r\n")
    srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", "10000", "--ring-bufs", "1"]
                           + ([mode] if mode else []),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    port = ready_port(srv, name, fail, r"ready: listening on 127\.0\.0\.1:(\d+),",
                      skip="no provided-buffer ring", log=log)

    def connect(rcvbuf=None):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.connect(("127.0.0.1", port))
        return s

    try:
        # 1. flood, never read, until the server stops reading us
        flood = connect(rcvbuf=4096)
        flood.setblocking(False)
        chunk = line * (65536 // len(line))
        stalled_since = None
        deadline = time.monotonic() + 30
        while True:
            try:
                flood.send(chunk)
                stalled_since = None
            except BlockingIOError:
                now = time.monotonic()
                stalled_since = stalled_since or now
                if now - stalled_since > 0.2:
                    break
                time.sleep(0.01)
            if time.monotonic() > deadline:
                fail(f"{mode or 'echo'}: the flooding client never stalled: the server kept reading for 30 s")

        # 2. idle connections, then one with a line, the flooder still there
        idle = [connect() for _ in range(3)]
        talker = connect()
        talker.sendall(line)
        got = b""
        end = time.monotonic() + 1
        want = 88 if mode == "--http" else len(reply)
        while len(got) < want and time.monotonic() < end:
            r, _, _ = select.select([talker], [], [], max(0.0, end - time.monotonic()))
            if not r:
                break
            data = talker.recv(64)
            if not data:
                break
            got += data
        if not (reply.fullmatch(got) if mode == "--http" else got == reply):
            fail(f"{mode or 'echo'}: a connection's line got {got!r} within 1 s, not {reply!r}: "
                 "the client that never reads held the one provided buffer")
        for s in idle + [talker, flood]:
            s.close()
    finally:
        stop_clean(srv, log, fail)
    print(f"{mode or 'echo'}: the line answered, the flooder still connected")


run(None)
run("--heartbeat")
run("--http")
print(f"PASS [{name}]")
