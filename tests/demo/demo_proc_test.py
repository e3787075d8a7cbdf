#!/usr/bin/env python3
"""tests/demo/demo_proc_test.py - the helpers of the demo's Python tests
(demo_proc.py) on stand-in processes (Python children), no server:
ready_port() takes nothing past the ready line from the pipe: the lines
written with it, in the same write, are still there for stop_clean()
(communicate() with a timeout reads the pipe itself). It read through
srv.stdout, which reads ahead, and they were lost: stop_clean() said
"STATS lines 0". Exit 0 pass, 1 fail.
"""
import subprocess
import sys

from demo_proc import read_line, ready_port, stop_clean

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


case("ready_port() leaves the lines after the ready line in the pipe", ready_leaves_the_rest)
case("read_line() returns a last line without a newline, then ''", read_line_at_the_end)
if fails:
    print(f"FAIL [{name}]: {len(fails)} cases")
    sys.exit(1)
print(f"PASS [{name}]")
