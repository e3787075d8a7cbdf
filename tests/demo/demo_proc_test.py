#!/usr/bin/env python3
"""tests/demo/demo_proc_test.py - the helpers of the demo's Python tests
(demo_proc.py) on stand-in processes (Python children), no server:
  - ready_port() takes nothing past the ready line from the pipe: the
    lines written with it, in the same write, are still there for
    stop_clean() (communicate() with a timeout reads the pipe itself).
    It read through srv.stdout, which reads ahead, and they were lost:
    stop_clean() said "STATS lines 0";
  - children() names a child whose name holds spaces and ')', and passes
    over a /proc entry that is gone when it reads it (a process that
    ended since listdir(); it raised FileNotFoundError);
  - reap_orphans() returns the exit status of an orphan that ends and
    kills one that does not;
  - stop_clean() does not count the time the server waited for a CPU
    (a 5 s bound failed servers kept from their CPU on a loaded
    machine), and still fails one that ignores SIGTERM.
Exit 0 pass, 1 fail, 77 skip (no PR_SET_CHILD_SUBREAPER).
"""
import os
import subprocess
import sys
import time

import demo_proc
from demo_proc import children, read_line, ready_port, reap_orphans, stop_clean, subreaper

name = "demo_proc_test"
fails = []


def fail(msg, *_):
    raise AssertionError(msg)


def case(what, fn):
    try:
        fn()
        print(f"ok: {what}")
    except AssertionError as e:
        fails.append(what)
        print(f"FAIL [{name}]: {what}: {e}")


def py(code, **kw):
    return subprocess.Popen([sys.executable, "-c", code], **kw)


# One write: the ready line and what follows it reach the pipe together.
SERVER = r"""
import os, signal, sys
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
os.write(1, b"a note\nready: listening on 127.0.0.1:4242\nSTATS conns=0 timers=0 x=1\n")
signal.pause()
"""


def ready_leaves_the_rest():
    srv = py(SERVER, stdout=subprocess.PIPE, text=True)
    try:
        log = []
        port = ready_port(srv, name, fail, log=log)
        if port != 4242 or len(log) != 2:
            fail(f"port {port}, {len(log)} lines read, want 4242 and 2")
        last = stop_clean(srv, log, fail)
        if "x=1" not in last:
            fail(f"the last STATS line is {last!r}")
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


def read_line_at_the_end():
    p = py("import os; os.write(1, b'one\\ntwo')", stdout=subprocess.PIPE, text=True)
    got = [read_line(p), read_line(p), read_line(p)]
    p.wait()
    if got != ["one\n", "two", ""]:
        fail(f"read {got}")


def children_by_name():
    p = py("import sys\nopen('/proc/self/comm', 'w').write('a) b (c')\nprint('named', flush=True)\n"
           "sys.stdin.read()", stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
    try:
        if read_line(p) != "named\n":
            fail("the child did not start")
        if children(os.getpid()) != [p.pid]:
            fail(f"children {children(os.getpid())}, want [{p.pid}] (named 'a) b (c')")
    finally:
        p.kill()
        p.wait()


def children_past_a_process_gone():
    real = demo_proc.os.listdir
    demo_proc.os.listdir = lambda d: real(d) + ["999999999"]  # no such process
    try:
        got = children(os.getpid())
    except OSError as e:
        fail(f"raised {e!r}")
    finally:
        demo_proc.os.listdir = real
    if got:
        fail(f"children {got} of a process with none")


def orphans_reaped():
    # a process starts two and exits: they are reparented to this one. It
    # exits once the first has ended (waitid() WNOWAIT leaves it to be
    # reaped): started to end 0.2 s later, that one still ran at the end
    # of the 0.5 s wait beside stress-ng --cpu 6 (1 run in 12), a
    # second Python interpreter starting that late, and was killed. It
    # exits by os._exit(): Popen.__del__() would reap the first itself.
    p = py("import os, subprocess, sys\n"
           "e = subprocess.Popen([sys.executable, '-c', 'import sys; sys.exit(3)'])\n"
           "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
           "os.waitid(os.P_PID, e.pid, os.WEXITED | os.WNOWAIT)\n"
           "os._exit(0)\n")  # no Popen.__del__(), which would reap it
    p.wait()
    codes, left = reap_orphans(0.5)
    if codes != [3] or left != 1:
        fail(f"exit statuses {codes}, {left} still running; want [3] and 1")
    if children(os.getpid()):
        fail(f"still children: {children(os.getpid())}")


# On SIGTERM: 0.3 s of CPU time, then a STATS line and exit 0.
BUSY_EXIT = r"""
import os, signal, time
def term(*_):
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    os.write(1, b"STATS conns=0 timers=0 x=1\n")
    os._exit(0)
signal.signal(signal.SIGTERM, term)
os.write(1, b"ready\n")
while True:
    signal.pause()
"""


def exit_kept_from_the_cpu():
    # The stand-in at SCHED_IDLE on one CPU beside a process that spins
    # there for 1 s: it exits about 1.3 s after SIGTERM, 0.3 s of them
    # its own. stop_clean() with 0.6 s failed it.
    cpu = min(os.sched_getaffinity(0))
    srv = py(BUSY_EXIT, stdout=subprocess.PIPE, text=True)
    hog = py("import os, time\nos.write(1, b'go\\n')\nend = time.monotonic() + 1.0\n"
             "while time.monotonic() < end:\n    pass\n", stdout=subprocess.PIPE, text=True)
    try:
        for p in (srv, hog):
            os.sched_setaffinity(p.pid, {cpu})
            read_line(p)
        os.sched_setscheduler(srv.pid, os.SCHED_IDLE, os.sched_param(0))
        last = stop_clean(srv, [], fail, secs=0.6)
        if "x=1" not in last:
            fail(f"the last STATS line is {last!r}")
    finally:
        for p in (srv, hog):
            if p.poll() is None:
                p.kill()
            p.wait()


def no_exit_fails():
    # A stand-in that ignores SIGTERM, asleep: failed 0.5 s later, not
    # after the 60 s that waits for a CPU may add.
    srv = py("import os, signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nos.write(1, b'ready\\n')\n"
             "while True:\n    signal.pause()\n", stdout=subprocess.PIPE, text=True)
    read_line(srv)
    start = time.monotonic()
    try:
        stop_clean(srv, [], fail, secs=0.5)
    except AssertionError as e:
        took = time.monotonic() - start
        if "still ran" not in str(e) or not 0.5 <= took < 30:
            fail(f"failed after {took:.1f} s with {e}")
        return
    fail("stop_clean() passed a server that ignores SIGTERM")


if not subreaper():
    print(f"SKIP [{name}]: prctl(PR_SET_CHILD_SUBREAPER) refused")
    sys.exit(77)
case("ready_port() leaves the lines after the ready line in the pipe", ready_leaves_the_rest)
case("read_line() returns a last line without a newline, then ''", read_line_at_the_end)
case("children() names a child called 'a) b (c'", children_by_name)
case("children() passes over a process gone since listdir()", children_past_a_process_gone)
case("reap_orphans() reaps an orphan that ends, kills one that does not", orphans_reaped)
case("stop_clean() does not count the server's waits for a CPU", exit_kept_from_the_cpu)
case("stop_clean() fails a server that ignores SIGTERM", no_exit_fails)
if fails:
    print(f"FAIL [{name}]: {len(fails)} cases")
    sys.exit(1)
print(f"PASS [{name}]")
