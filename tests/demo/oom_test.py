#!/usr/bin/env python3
"""tests/demo/oom_test.py - the server out of memory for a while: it
closes the connections it cannot hold, and serves again once memory is back.

usage: oom_test.py SERVER NAME [example]

SERVER is idle-server-c or idle-server, or with "example" an echo
server of the C++ examples (cpp/examples/loop_server.cpp, of
docs/cpp-server.md, or co_server.cpp, with coroutines), which has
no STATS line: the request is echoed, and at exit its own check (as
many fds open as at its start) must pass.

The server (echo mode, 10 s idle timeout) is left no address space to
grow into (a soft RLIMIT_AS below what it maps: prlimit), then sent
connections until it closes one it accepted (at most 3,000: a
connection record is some 200 bytes, the heap's free room at start a
few hundred of them). Then our connections are closed, the limit put
back, and a new connection's line must be echoed within 1 s; after
SIGTERM the server exits 0 with no connection and no timer left.

Meanwhile a STATS request gets its line or the close, the server still
running. idle-server (C++) threw std::bad_alloc out of its accept
handler: the connection's descriptor was left open, unanswered, and the
accept was not armed again, so the server never accepted once memory
was back; and a STATS request made it exit. idle-server-c closes such
a connection (counted in errors) and goes on.
Needs prlimit (util-linux); not under sanitizers (their allocators do
not run under an address-space limit: meson.build registers it without).
Exit 0 pass, 1 fail, 77 skip (io_uring refused, no prlimit).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

from demo_proc import ready_port

server_path, name = sys.argv[1], sys.argv[2]
example = sys.argv[3:] == ["example"]
if not shutil.which("prlimit"):
    print(f"SKIP [{name}]: no prlimit")
    sys.exit(77)


def fail(msg, log=""):
    print(f"FAIL [{name}]: {msg}")
    if log:
        print("--- server output:\n" + log)
    sys.exit(1)


args = ["--idle-ms", "10000", "0"] if example else ["--port", "0", "--idle-ms", "10000"]
srv = subprocess.Popen([server_path] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
port = ready_port(srv, name, fail)


def echo(timeout):
    """A new connection's line echoed within @timeout s: the reply, or what went wrong."""
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"hello\n")
        return s.recv(16)
    except OSError as e:
        return repr(e)
    finally:
        s.close()


def prlimit_as(soft):
    subprocess.run(["prlimit", f"--pid={srv.pid}", f"--as={soft}:unlimited"], check=True)


conns = []
try:
    if echo(5) != b"hello\n":  # the worker's loop runs (its ring is mapped)
        fail("no echo before the limit")
    vm_kb = int(re.search(r"VmSize:\s+(\d+)", open(f"/proc/{srv.pid}/status").read()).group(1))
    prlimit_as(vm_kb * 1024 - 4096)
    closed = None

    def closed_by_server(s):
        try:
            return s.recv(1) == b""
        except BlockingIOError:
            return False
        except ConnectionResetError:
            return True

    for i in range(3000):
        s = socket.socket()
        s.settimeout(1)
        try:
            s.connect(("127.0.0.1", port))
        except OSError as e:
            fail(f"connection {i}: {e!r}: the server stopped accepting, out of memory")
        s.setblocking(False)
        conns.append(s)
        if i % 64 == 63:  # has the server closed one of the last ones?
            time.sleep(0.005)
            closed = next((j for j in range(i - 63, i + 1) if closed_by_server(conns[j])), None)
            if closed is not None:
                break
    # a STATS request meanwhile gets its line or the close, and the server
    # lives on: one of ours closed first, so that the server has the room
    # of its record for the request's (not for the line's 2 KiB)
    conns.pop(0).close()
    time.sleep(0.05)
    st = socket.socket()
    st.settimeout(1)
    try:
        st.connect(("127.0.0.1", port))
        st.sendall(b"STATS\n")
        st.recv(4096)
    except ConnectionResetError:
        pass  # closed unread: no memory to take the connection
    except OSError as e:
        fail(f"STATS out of memory: {e!r}")
    finally:
        st.close()
    time.sleep(0.05)
    if srv.poll() is not None:
        fail(f"the server exited ({srv.returncode}) on a STATS request out of memory", srv.stdout.read())
    for s in conns:
        s.close()
    prlimit_as("unlimited")
    got = echo(1)
    if got != b"hello\n":
        fail(f"memory back, a new connection's line got {got!r} within 1 s: the server no longer accepts")
    if closed is None:
        fail("3,000 connections and none closed: the server never ran out of memory, or left those "
             "it could not hold open")
finally:
    if srv.poll() is None:
        srv.send_signal(signal.SIGTERM)
    try:
        out, _ = srv.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, _ = srv.communicate()
        fail("the server still ran 5 s after SIGTERM", out)

if example:
    if srv.returncode != 0:
        fail(f"the server exited with {srv.returncode}", out)
    print(f"PASS [{name}]: connection {closed} closed out of memory; served again after")
    sys.exit(0)
stats = [s for s in out.splitlines() if s.startswith("STATS ")]
if srv.returncode != 0 or not stats or " conns=0 timers=0 " not in stats[-1]:
    fail(f"the server exited with {srv.returncode}, connections or timers left", out)
errors = int(re.search(r" errors=(\d+)", stats[-1]).group(1))
print(f"PASS [{name}]: connection {closed} closed out of memory, errors={errors}; served again after")
