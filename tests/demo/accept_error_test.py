#!/usr/bin/env python3
"""tests/demo/accept_error_test.py - the server's listening socket stops
accepting: the server must say so once and shut down, not spin.

usage: accept_error_test.py SERVER NAME

The server (echo mode) holds one connection; then the test takes a copy
of its listening socket (pidfd_getfd(2), Linux 5.6) and shuts it down,
so that every accept on it fails with EINVAL from then on, as every
multishot accept does on a kernel before Linux 5.19. Asserts: the server
exits within 2 s, status 1, with one line saying the listening socket
accepts no more, the connection it held closed cleanly (EOF), and its
last STATS line says no connection and no timer left. Both servers
accepted again at once after such an error: one line each time, at full
CPU (20 MB of stderr in 2 s), forever.
Exit 0 pass, 1 fail, 77 skip (io_uring refused, or pidfd_getfd refused:
an old kernel, or ptrace restricted).
"""
import ctypes
import os
import socket
import subprocess
import sys
import tempfile
import time

from demo_proc import exit_within, ready_port

server_path, name = sys.argv[1], sys.argv[2]


def fail(msg, log=""):
    print(f"FAIL [{name}]: {msg}")
    if log:
        print("--- server output:\n" + log)
    sys.exit(1)


err = tempfile.TemporaryFile(mode="w+")
srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", "10000"], stdout=subprocess.PIPE,
                       stderr=err, text=True)
try:
    port = ready_port(srv, name, fail)

    held = socket.create_connection(("127.0.0.1", port))
    held.sendall(b"hello\n")
    held.settimeout(5)
    if held.recv(16) != b"hello\n":
        fail("no echo on the connection held")

    # the listening socket: the server's one socket in state LISTEN (0A)
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            listening |= {ln.split()[9] for ln in f.read().splitlines()[1:] if ln.split()[3] == "0A"}
    lfd = None
    for fd in os.listdir(f"/proc/{srv.pid}/fd"):
        try:
            target = os.readlink(f"/proc/{srv.pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in listening:
            lfd = int(fd)
    if lfd is None:
        fail("no listening socket found in the server's descriptors")

    libc = ctypes.CDLL(None, use_errno=True)
    SYS_pidfd_getfd = 438
    pidfd = os.pidfd_open(srv.pid)
    copy = libc.syscall(SYS_pidfd_getfd, pidfd, lfd, 0)
    if copy < 0:
        print(f"SKIP [{name}]: pidfd_getfd: {os.strerror(ctypes.get_errno())}")
        sys.exit(77)
    os.close(pidfd)
    t0 = time.monotonic()
    lsock = socket.socket(fileno=copy)
    lsock.shutdown(socket.SHUT_RDWR)  # the server's accepts fail EINVAL from now on
    lsock.close()

    out = exit_within(srv, err, 2, fail, "still running 2 s after its listening socket failed")
    dt = time.monotonic() - t0
    err.seek(0)
    log = err.read()
    lines = [ln for ln in log.splitlines() if "accept" in ln]
    if srv.returncode != 1:
        fail(f"exited with {srv.returncode}, want 1", log + out)
    if len(lines) != 1 or "accepts no more" not in lines[0]:
        fail(f"{len(lines)} accept lines, want one saying the listener accepts no more", log[:2000])
    if held.recv(16) != b"":
        fail("the connection held was not closed cleanly")
    stats = [ln for ln in out.splitlines() if ln.startswith("STATS ")]
    if not stats or " conns=0 timers=0 " not in stats[-1]:
        fail("no final STATS line with no connection and no timer left", out)
    print(f"PASS [{name}]: shut down {dt * 1000:.0f} ms after its listening socket failed: {lines[0]}")
finally:
    if srv.poll() is None:
        srv.kill()
        srv.wait()
