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
import os
import socket
import subprocess
import sys
import tempfile
import time

from demo_proc import reap_orphans, subreaper

load, shim = sys.argv[1], sys.argv[2]
if not subreaper():
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
# the processes it left, reparented to us: ended within 0.1 s (not
# reaped by idle-load) or still running (killed)
ended, running = reap_orphans(0.1)
if ended or running:
    failures.append(f"{len(ended) + running} worker processes left: {running} running, "
                    f"{len(ended)} ended unreaped (exits {ended})")
for f in failures:
    print("FAIL " + f)
if failures:
    print("--- idle-load:\n" + said)
sys.exit(1 if failures else 0)
