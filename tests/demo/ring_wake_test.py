#!/usr/bin/env python3
"""tests/demo/ring_wake_test.py - a connection waiting for a provided
buffer is not left waiting when the one woken before it ends without
taking the buffer.

usage: ring_wake_test.py SERVER NAME

The server (idle-server-c or idle-server) runs in echo mode with a
provided-buffer ring of one buffer and a 10 s idle timeout. Each round
opens 100 connections, stops the server (SIGSTOP), has every other one
send a line and the others end (a FIN in rounds 1 and 3, an RST in
rounds 2 and 4), then lets the server go on (SIGCONT). A receive waits for its socket to be readable, which the end of
a stream or a reset makes it too, then takes a buffer: with the one
buffer held, the lines' receives and the ends' alike fail ENOBUFS and
wait on the starved list; each buffer given back wakes the first. A
woken receive that finds an end or a reset takes no buffer (the kernel
puts it back in the ring): its wake-up was lost, and every connection
behind it waited, its line unread, until its idle timer closed it (10 s;
in runs before the fix, up to 49 of 50 lines a round). Every line's echo
must come within 3 s. After SIGTERM the server must exit 0 with no
connection and no timer left.
Exit 0 pass, 1 fail, 77 skip (io_uring or the provided-buffer ring refused).
"""
import select
import signal
import socket
import struct
import subprocess
import sys
import time

from demo_proc import ready_port

server_path, name = sys.argv[1], sys.argv[2]
CONNS, ROUNDS, WITHIN = 100, 4, 3.0


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", "10000", "--ring-bufs", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
log = []
port = ready_port(srv, name, fail, r"ready: listening on 127\.0\.0\.1:(\d+),",
                  skip="no provided-buffer ring", log=log)
try:
    for rnd in range(ROUNDS):
        how = "FIN" if rnd % 2 == 0 else "RST"
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(CONNS)]
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
        start = time.monotonic()
        got = {s: b"" for s in talkers}
        waiting = set(talkers)
        while waiting and time.monotonic() - start < WITHIN:
            r, _, _ = select.select(list(waiting), [], [], max(0.0, WITHIN - (time.monotonic() - start)))
            for s in r:
                data = s.recv(64)
                got[s] += data
                if not data or got[s] == b"hello\n":
                    waiting.discard(s)
        bad = [got[s] for s in talkers if got[s] != b"hello\n"]
        if bad:
            fail(f"round {rnd + 1} ({how}): {len(bad)} of {len(talkers)} lines not echoed within "
                 f"{WITHIN:.0f} s (got {bad[0]!r}): left waiting for the buffer")
        for s in socks:
            s.close()
        print(f"round {rnd + 1} ({how}): {len(talkers)} lines echoed, the last after "
              f"{time.monotonic() - start:.3f} s")
finally:
    if srv.poll() is None:
        srv.send_signal(signal.SIGTERM)
    try:
        out, _ = srv.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, _ = srv.communicate()
        log.append(out)
        fail("the server still ran 5 s after SIGTERM")
    log.append(out)

stats = [s for s in "".join(log).splitlines() if s.startswith("STATS ")]
if srv.returncode != 0 or not stats:
    fail(f"the server exited with {srv.returncode}, STATS lines {len(stats)}: {''.join(log)}")
if " conns=0 timers=0 " not in stats[-1] or " nobufs=0 " in stats[-1]:
    fail(f"connections or timers left at exit, or no receive waited for a buffer: {stats[-1]}")
print(f"PASS [{name}]")
