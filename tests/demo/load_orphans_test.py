#!/usr/bin/env python3
"""tests/demo/load_orphans_test.py - idle-load's worker processes when
the process that started them is killed: none may be left running.

usage: load_orphans_test.py IDLE_LOAD

idle-load splits 40 connections over 4 processes (--per-proc 10), at a
10 s idle timeout, against a port that takes the connects and never
answers. Once every worker has opened its connections (the 40 have
arrived at the port, 10 s at most: each worker connects only after all
4 are set up, so all 4 were forked and run), idle-load is sent SIGKILL
(as demo.sh does 5 s after a SIGTERM, or as a crash or the OOM killer
would). Its 4 workers must be gone within 2 s: this test is their
subreaper, so any left running are reparented to it. They ran on, their
connections open, unjudged, until their own end (10 s and more).
Exit 0 pass, 1 fail, 77 skip.
"""
import select
import socket
import subprocess
import sys
import time

from demo_proc import children, reap_orphans, subreaper

load = sys.argv[1]
if not subreaper():
    print("SKIP: prctl(PR_SET_CHILD_SUBREAPER) refused")
    sys.exit(77)

ls = socket.socket()  # a port that takes the connects, never answers
ls.bind(("127.0.0.1", 0))
ls.listen(64)
p = subprocess.Popen([load, "--port", str(ls.getsockname()[1]), "--conns", "40", "--per-proc", "10",
                      "--idle-ms", "10000", "--quiet", "--no-stats"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # no pipe a worker could hold
# Wait for what the verdict needs: the 40 connections in (accepted, never
# answered: the kernel completed them at the SYN already), so every
# worker runs; then its children are all of them.
conns, end = [], time.monotonic() + 10
while len(conns) < 40 and p.poll() is None and time.monotonic() < end:
    if select.select([ls], [], [], 0.05)[0]:
        conns.append(ls.accept()[0])
if p.poll() is not None:
    print(f"FAIL: idle-load exited ({p.returncode}) before it was killed")
    sys.exit(1)
workers = children(p.pid)
if len(conns) < 40:
    p.kill()
    reap_orphans(0)
    print(f"FAIL: {len(conns)} of 40 connections opened in 10 s ({len(workers)} worker processes)")
    sys.exit(1)
p.kill()
p.wait()
codes, left = reap_orphans(2)  # those left running are killed
if len(workers) != 4:
    print(f"FAIL: idle-load ran {len(workers)} worker processes, want 4")
    sys.exit(1)
if left:
    print(f"FAIL: {left} of 4 worker processes still running 2 s after idle-load was killed")
    sys.exit(1)
print(f"PASS: the 4 worker processes ended within 2 s of idle-load's SIGKILL (exits {codes})")
