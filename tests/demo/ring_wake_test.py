#!/usr/bin/env python3
"""tests/demo/ring_wake_test.py - a buffer given back goes to a connection
whose data waits for one, however many idle connections came meanwhile.

usage: ring_wake_test.py SERVER NAME

The server (idle-server-c or idle-server, echo mode) runs with a
provided-buffer ring of one buffer and a 10 s idle timeout:

  1. a client floods the server and never reads, with a small receive
     buffer: the server's echo to it cannot go out, so the one buffer
     stays held (until our sends stall: the server stopped reading);
  2. three idle connections are opened, then one that sends a line: its
     receive finds the ring empty (ENOBUFS, nobufs in STATS) and waits;
  3. the flooding client resets its connection: the server's send fails
     and gives the buffer back.

The line's echo must then come within 3 s. It did not when a receive was
issued before data came: on an empty ring the kernel refuses a buffer at
once, data or not, so the idle connections had queued for the buffer
ahead of the one with data; the buffer given back went to the first idle
one, which left it unused, and the line went unread until the idle timer
closed its connection. After SIGTERM the server must exit 0 with no
connection and no timer left, having counted nobufs > 0.
Exit 0 pass, 1 fail, 77 skip (io_uring or the provided-buffer ring refused).
"""
import errno
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

server_path, name = sys.argv[1], sys.argv[2]


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", "10000", "--ring-bufs", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
port = None
log = []
for line in srv.stdout:
    log.append(line)
    if "no provided-buffer ring" in line:
        srv.kill()
        print(f"SKIP [{name}]: {line.strip()}")
        sys.exit(77)
    m = re.search(r"ready: listening on 127\.0\.0\.1:(\d+),", line)
    if m:
        port = int(m.group(1))
        break
if port is None:
    rc = srv.wait()
    if rc == 77:
        print(f"SKIP [{name}]: io_uring refused")
        sys.exit(77)
    fail(f"the server exited ({rc}) without a ready line: {''.join(log)}")


def connect(rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    return s


try:
    # 1. hold the one buffer: flood, never read, until the server stops reading
    flood = connect(rcvbuf=4096)
    flood.setblocking(False)
    chunk = b"x" * 65536
    stalled_since = None
    deadline = time.monotonic() + 30
    while True:
        try:
            flood.send(chunk)
            stalled_since = None
        except BlockingIOError:
            now = time.monotonic()
            stalled_since = stalled_since or now
            if now - stalled_since > 0.5:
                break
            time.sleep(0.01)
        if time.monotonic() > deadline:
            fail("the flooding client never stalled: the server kept reading for 30 s")

    # 2. idle connections, then one with data, all while the buffer is held
    idle = [connect() for _ in range(3)]
    time.sleep(0.3)  # accepted and their receives issued
    talker = connect()
    time.sleep(0.3)
    talker.sendall(b"hello\n")
    time.sleep(0.3)  # its receive refused a buffer

    # 3. the buffer comes back: a reset fails the server's send
    flood.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    flood.close()

    got = b""
    end = time.monotonic() + 3
    while len(got) < 6 and time.monotonic() < end:
        r, _, _ = select.select([talker], [], [], max(0.0, end - time.monotonic()))
        if not r:
            break
        data = talker.recv(64)
        if not data:
            break
        got += data
    if got != b"hello\n":
        fail(f"the connection whose line waited for the buffer got {got!r} within 3 s of the buffer "
             "coming back, not its echo: the buffer went to an idle connection and lay unused")
    print(f"the echo came once the buffer was back ({len(idle)} idle connections opened before)")
    for s in idle + [talker]:
        s.close()
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

stats = [line for line in "".join(log).splitlines() if line.startswith("STATS ")]
if srv.returncode != 0 or not stats:
    fail(f"the server exited with {srv.returncode}, STATS lines {len(stats)}: {''.join(log)}")
last = stats[-1]
if " conns=0 timers=0 " not in last:
    fail(f"connections or timers left at exit: {last}")
nobufs = int(re.search(r" nobufs=(\d+)", last).group(1))
if nobufs == 0:
    fail("nobufs=0: no receive was refused a buffer, the test did not starve the ring")
print(f"PASS [{name}]: nobufs={nobufs}")
