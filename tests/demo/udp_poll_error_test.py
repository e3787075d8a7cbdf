#!/usr/bin/env python3
"""tests/demo/udp_poll_error_test.py - the UDP server's multishot poll
fails, every time: the server must say so once and shut down, not spin.

usage: udp_poll_error_test.py SERVER SHIM

SHIM (poll_refuse_shim.c, LD_PRELOAD'ed) spoils each multishot poll the
server submits. POLL_REFUSE=einval: the kernel refuses it with EINVAL, as
every kernel before Linux 5.13 refuses a multishot poll; the server must
exit 77 (the demo's "this kernel cannot"). POLL_REFUSE=ebadf: an EBADF,
exit 1. Each within 2 s, with one poll line on stderr and a last STATS
line with no timer left. The server polled again at once after any
error: one line each time, at full CPU, forever.
Exit 0 pass, 1 fail, 77 skip (io_uring refused).
"""
import os
import subprocess
import sys
import tempfile

from demo_proc import exit_within

server_path, shim = sys.argv[1], sys.argv[2]


def fail(msg, log=""):
    print(f"FAIL [udp_poll_error]: {msg}")
    if log:
        print("--- server output:\n" + log)
    sys.exit(1)


for mode, want, says in (("einval", 77, "refuses a multishot poll"), ("ebadf", 1, "shutting down")):
    env = dict(os.environ, POLL_REFUSE=mode, LD_PRELOAD=shim)
    # a sanitized build: the shim comes before the sanitizer's runtime
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    err = tempfile.TemporaryFile(mode="w+")
    srv = subprocess.Popen([server_path, "--port", "0", "--max-sessions", "1024"], stdout=subprocess.PIPE,
                           stderr=err, text=True, env=env)
    out = exit_within(srv, err, 2, fail, f"{mode}: still running 2 s after its poll failed")
    err.seek(0)
    log = err.read()
    if srv.returncode == 77 and "ready" not in out:
        print("SKIP [udp_poll_error]: io_uring refused")
        sys.exit(77)
    lines = [ln for ln in log.splitlines() if "poll" in ln]
    if srv.returncode != want:
        fail(f"{mode}: exited with {srv.returncode}, want {want}", log + out)
    if len(lines) != 1 or says not in lines[0]:
        fail(f"{mode}: {len(lines)} poll lines, want one saying '{says}'", log[:2000])
    stats = [ln for ln in out.splitlines() if ln.startswith("STATS ")]
    if not stats or " timers=0 " not in stats[-1]:
        fail(f"{mode}: no final STATS line with no timer left", out)
    print(f"PASS [udp_poll_error]: {mode}: exit {want}: {lines[0]}")
