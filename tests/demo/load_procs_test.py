#!/usr/bin/env python3
"""tests/demo/load_procs_test.py - idle-load's worker processes when it
cannot start them all: none may be left running.

usage: load_procs_test.py IDLE_LOAD SHIM

idle-load splits 40 connections over 4 processes (--per-proc 10) with
SHIM (old_kernel_shim.c) preloaded and FORK_FAIL_AFTER=2: its third
fork() fails with EAGAIN, as at RLIMIT_NPROC. It must exit 1 with a line
naming fork, within 5 s, having stopped the two it started: this test is
their subreaper (PR_SET_CHILD_SUBREAPER), so any left running would be
reparented to it. They were left, waiting 10 s at the start line for the
processes never started, then running their connections unjudged.
Exit 0 pass, 1 fail.
"""
import ctypes
import os
import socket
import subprocess
import sys
import tempfile
import time

from demo_proc import children

load, shim = sys.argv[1], sys.argv[2]
PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    print("SKIP: prctl(PR_SET_CHILD_SUBREAPER) refused")
    sys.exit(77)

ls = socket.socket()  # a port that takes the connects, never answers
ls.bind(("127.0.0.1", 0))
ls.listen(64)
env = dict(os.environ, LD_PRELOAD=shim, FORK_FAIL_AFTER="2")
env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
out = tempfile.TemporaryFile(mode="w+")  # not a pipe: one left open by a worker left would hang us
t0 = time.monotonic()
try:
    p = subprocess.run([load, "--port", str(ls.getsockname()[1]), "--conns", "40", "--per-proc", "10",
                        "--idle-ms", "1000", "--quiet", "--no-stats"],
                       env=env, stdout=out, stderr=subprocess.STDOUT, timeout=30)
except subprocess.TimeoutExpired:
    print("FAIL: idle-load still running after 30 s")
    sys.exit(1)
took = time.monotonic() - t0
out.seek(0)
said = out.read()
failures = []
if p.returncode != 1 or "idle-load: fork: " not in said:
    failures.append(f"exit {p.returncode}, want 1 and a line naming fork")
if took > 5:
    failures.append(f"took {took:.1f} s (at most 5 expected)")
left = []
time.sleep(0.1)
while True:  # the processes it left, reparented to us
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        left = [str(d) for d in children(os.getpid())]
        for d in left:
            os.kill(int(d), 9)
        break
    left.append(str(pid))
if left:
    failures.append(f"{len(left)} worker processes left running: {' '.join(left)}")
for f in failures:
    print("FAIL " + f)
if failures:
    print("--- idle-load:\n" + said)
sys.exit(1 if failures else 0)
