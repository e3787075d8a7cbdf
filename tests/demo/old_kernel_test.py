#!/usr/bin/env python3
"""tests/demo/old_kernel_test.py - a demo server on an older kernel's
io_uring: it must run where the kernel has what it needs, and where it
has not, say so in one line and exit 77 (the demo's "this kernel
cannot"), not spin, not exit 1.

usage: old_kernel_test.py SERVER SHIM tcp|udp|example [IDLE_LOAD]

SHIM (old_kernel_shim.c, LD_PRELOAD'ed) makes liburing answer as the
kernel OLD_KERNEL names. Each case within 2 s:
  5.10   (no IORING_FEAT_EXT_ARG): exit 77, one line naming Linux 5.11;
         idle-server (C++) ran the loop without io_uring and exited 1
         (also where a seccomp profile refuses io_uring);
  5.4    (no IORING_SETUP_CQSIZE either): the same; each server exited 1
         with "io_uring_setup: Invalid argument";
  tcp, 5.15 (no multishot accept, no provided-buffer ring): exit 77, one
         line saying the kernel refuses a multishot accept, no connection
         and no timer left;
  tcp, 5.19 (no DEFER_TASKRUN: a plain ring, the oldest kernel the TCP
         server runs on): an echo, and the idle timeout closes the
         connection, not before it; SIGTERM then exits 0;
  udp, 5.12 (no multishot poll): exit 77, one poll line;
  no "ready" line from a server refused (77): it was printed before the
  loop existed, or before its accept or poll was submitted, and
  scripts/demo.sh then ran the generator against it (FAIL, not 77); and
  udp, POLL_REFUSE=ebadf: every poll fails EBADF, exit 1, one poll line.
  The UDP server polled again at once after any error: one line each
  time, at full CPU, forever. example (the C++ echo server of
  docs/cpp-server.md), 5.15: exit 77 with one accept line and no word of
  listening (its test failed there, not skipped). IDLE_LOAD on 5.10 must
  exit 77 naming
  Linux 5.11: it took liburing's own timeout CQE for a connection's and
  crashed (SIGSEGV).
Exit 0 pass, 1 fail, 77 skip (io_uring refused).
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from demo_proc import exit_within, ready_port

server_path, shim, kind = sys.argv[1], sys.argv[2], sys.argv[3]
name = f"old_kernel {kind} {os.path.basename(server_path)}"
IDLE_MS = 300


def fail(msg, log=""):
    print(f"FAIL [{name}]: {msg}")
    if log:
        print("--- server output:\n" + log)
    sys.exit(1)


def start(env_add, err):
    # a kernel of its own: not one the whole suite may be run as
    env = {k: v for k, v in os.environ.items() if k != "OLD_KERNEL"}
    env.update(LD_PRELOAD=shim, **env_add)
    # a sanitized build: the shim comes before the sanitizer's runtime
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    if kind == "example":
        args = [server_path, "0"]
    else:
        args = [server_path, "--port", "0"]
        args += ["--max-sessions", "1024"] if kind == "udp" else ["--idle-ms", str(IDLE_MS)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True, env=env)


def refused(env_add, says, want=77, stats=" timers=0 "):
    """The server exits @want within 2 s, with one stderr line holding
    @says (the last one) and a final STATS line holding @stats; refused
    (77), it says nothing of being ready."""
    what = " ".join(f"{k}={v}" for k, v in env_add.items())
    err = tempfile.TemporaryFile(mode="w+")
    srv = start(env_add, err)
    out = exit_within(srv, err, 2, fail, f"{what}: still running after 2 s")
    err.seek(0)
    log = err.read()
    lines = [ln for ln in log.splitlines() if says in ln]
    if srv.returncode == 77 and not lines and "io_uring_setup: " in log:
        print(f"SKIP [{name}]: io_uring refused: {log.strip()}")
        sys.exit(77)
    if srv.returncode != want:
        fail(f"{what}: exited with {srv.returncode}, want {want}", log + out)
    if len(lines) != 1 or log.splitlines()[-1] != lines[0]:
        fail(f"{what}: want one last line saying '{says}'", log[:2000])
    if want == 77 and ("ready" in out or "listening on" in out):
        fail(f"{what}: a ready line from a server the kernel refuses", out)
    if stats:
        st = [ln for ln in out.splitlines() if ln.startswith("STATS ")]
        if not st or stats not in st[-1]:
            fail(f"{what}: no final STATS line with '{stats}'", out)
    print(f"PASS [{name}]: {what}: exit {want}: {lines[0]}")


def serves_on_plain_ring():
    """OLD_KERNEL=5.19: an echo, then the idle timeout closes the
    connection no earlier than IDLE_MS after the bytes were sent."""
    err = tempfile.TemporaryFile(mode="w+")
    srv = start({"OLD_KERNEL": "5.19"}, err)
    try:
        port = ready_port(srv, name, fail)
        c = socket.create_connection(("127.0.0.1", port))
        c.settimeout(5)
        t0 = time.monotonic()
        c.sendall(b"hello\n")
        if c.recv(16) != b"hello\n":
            fail("5.19: no echo")
        if c.recv(16) != b"":
            fail("5.19: the connection was not closed cleanly")
        dt = (time.monotonic() - t0) * 1000
        if dt < IDLE_MS:
            fail(f"5.19: closed {dt:.0f} ms after its last bytes, before the {IDLE_MS} ms idle timeout")
        srv.send_signal(signal.SIGTERM)
        out = exit_within(srv, err, 2, fail, "5.19: still running 2 s after SIGTERM")
        err.seek(0)
        log = err.read()
        if srv.returncode != 0:
            fail(f"5.19: exited with {srv.returncode} after SIGTERM, want 0", log + out)
        print(f"PASS [{name}]: OLD_KERNEL=5.19: echo, closed idle after {dt:.0f} ms, exit 0")
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


if kind == "example":  # cpp/examples/loop_server.cpp
    refused({"OLD_KERNEL": "5.15"}, "accept: Invalid argument", stats=None)
    sys.exit(0)
refused({"OLD_KERNEL": "5.10"}, "Linux 5.11", stats=None)
refused({"OLD_KERNEL": "5.4"}, "Linux 5.11", stats=None)
if kind == "tcp":
    refused({"OLD_KERNEL": "5.15"}, "refuses a multishot accept", stats=" conns=0 timers=0 ")
    serves_on_plain_ring()
    if len(sys.argv) > 4:  # the generator, idle-load, on 5.10
        env = dict(os.environ, LD_PRELOAD=shim, OLD_KERNEL="5.10")
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
        gen = subprocess.run([sys.argv[4], "--port", "9", "--conns", "1"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, timeout=10, env=env)
        if gen.returncode != 77 or "Linux 5.11" not in gen.stderr:
            fail(f"idle-load on 5.10: exit {gen.returncode}, want 77 with a line naming Linux 5.11",
                 gen.stderr[-2000:])
        print(f"PASS [{name}]: idle-load, OLD_KERNEL=5.10: exit 77: {gen.stderr.strip()}")
else:
    refused({"OLD_KERNEL": "5.12"}, "refuses a multishot poll")
    refused({"POLL_REFUSE": "ebadf"}, "poll: Bad file descriptor", want=1)
