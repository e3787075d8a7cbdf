#!/usr/bin/env python3
# tests/demo/signal_test.py - no shutdown and no STATS request is lost,
# whenever the signal comes and whatever the server inherited.
#
# usage: signal_test.py SERVER SIGNAL_SHIM OLD_KERNEL_SHIM tcp|udp
#
# Each case starts SERVER (--port 0) and must see it end cleanly: exit 0
# within a few seconds, with its final STATS line.
#  - A signal the server gets at its first getrlimit() (TCP) or socket()
#    (UDP) call (signal_shim.c), before anything of its own is set up:
#    SIGTERM must stop it cleanly, SIGTERM inherited as ignored too (it
#    was discarded and the server ran on until a second SIGTERM), and
#    SIGUSR1 must get its STATS line (it killed the server).
# TCP servers, also with --workers 2 for the above, and:
# Started as a shell starts a background job (SIGINT ignored), a SIGINT to
# its process group (a Ctrl-C at the terminal, meant for the foreground
# job) must leave it serving: it read the signal anyway (blocked, it was
# queued) and shut down; started without, such a SIGINT must stop it
# cleanly.
#  - SIGCHLD inherited as ignored: the parent must still reap its
#    workers and exit after SIGTERM (no SIGCHLD came: it waited forever).
#  - The parent killed (SIGKILL): each worker must shut down by itself,
#    exit 0 (they served on, orphaned, holding the port).
#  - fork() failing for the second of 3 workers (old_kernel_shim.c's
#    FORK_FAIL_AFTER): exit 1, no worker left running (the first served
#    on, orphaned).
# Exit 0 pass, 1 fail, 77 skip (io_uring refused).
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

from demo_proc import read_line, reap_orphans, subreaper

server, shim, old_shim, kind = sys.argv[1:5]
name = f"signal_test {os.path.basename(server)}"
fails = []

# Orphaned workers come to this process, so that their exit is seen.
subreaper()


def args(workers):
    if kind == "udp":
        return [server, "--port", "0", "--idle-ms", "200", "--max-sessions", "1000"]
    return [server, "--port", "0", "--idle-ms", "200", "--workers", str(workers)]


def start(workers, env=None, ignore=(), out=subprocess.PIPE):
    def pre():
        for s in ignore:
            signal.signal(s, signal.SIG_IGN)
    e = dict(os.environ)
    e.update(env or {})
    if "SIGNAL_SHIM_AT" in e:
        e["LD_PRELOAD"] = shim
    if "LD_PRELOAD" in e:
        e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    return subprocess.Popen(args(workers), stdout=out, stderr=subprocess.STDOUT, text=True,
                            env=e, preexec_fn=pre, process_group=0)


def ready(p):
    """Lines up to the ready line (None if it exits first), read past
    nothing (read_line()): ends() takes the rest with communicate()."""
    lines = []
    while line := read_line(p):
        lines.append(line)
        if "ready: listening" in line:
            return lines
    if p.wait() == 77:
        print(f"SKIP [{name}]: io_uring refused: {''.join(lines)}")
        sys.exit(77)
    return None


def ends(p, secs):
    """The process's output once it exits within @secs, else None (killed)."""
    try:
        out, _ = p.communicate(timeout=secs)
        return out
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM) # as a user would, a second time
        try:
            p.wait(timeout=2)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        return None


def stats_lines(p, n, secs):
    """Reads @p's output until @n STATS lines came (True) or @secs passed
    or it ended (False), a byte at a time as ready() does."""
    fd, got, line, end = p.stdout.fileno(), 0, b"", time.monotonic() + secs
    while got < n:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        c = os.read(fd, 1)
        if not c:
            return False
        line += c
        if c == b"\n":
            got += line.startswith(b"STATS ")
            line = b""
    return True


def serves(port):
    """The server at @port answers within 2 s: an echoed byte (TCP), a
    STATS reply to UDP_STATS (udp_session.h)."""
    try:
        if kind == "udp":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.settimeout(2)
                u.sendto(struct.pack("=IB3xQQ", 0x53555754, 4, 0, 0), ("127.0.0.1", port))
                return u.recv(2048).startswith(b"STATS ")
        with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
            c.sendall(b"x")
            return c.recv(1) == b"x"
    except OSError:
        return False


def case(what, ok, detail=""):
    if ok:
        print(f"ok: {what}")
    else:
        fails.append(what)
        print(f"FAIL [{name}]: {what}{': ' + detail if detail else ''}")


at = "socket" if kind == "udp" else "getrlimit"
for workers in [1] if kind == "udp" else [1, 2]:
    w = f"--workers {workers}: " if kind == "tcp" else ""
    for ign in [(), (signal.SIGTERM,)]:
        p = start(workers, {"SIGNAL_SHIM_AT": at, "SIGNAL_SHIM_SIG": str(int(signal.SIGTERM))}, ign)
        out = ends(p, 3)
        said = "SIGTERM inherited as ignored" if ign else "SIGTERM"
        case(f"{w}{said} at its first {at}(): exit 0 within 3 s with a STATS line",
             out is not None and p.returncode == 0 and "STATS " in out,
             "still running 3 s later" if out is None else f"exit {p.returncode}: {out[-400:]}")
    p = start(workers, {"SIGNAL_SHIM_AT": at, "SIGNAL_SHIM_SIG": str(int(signal.SIGUSR1))})
    lines = ready(p)
    if lines is None:
        out = p.stdout.read()
        case(f"{w}SIGUSR1 at its first {at}(): answered", False, f"exit {p.returncode} before ready: {out[-400:]}")
        continue
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    out = ends(p, 3)
    n = ("".join(lines) + (out or "")).count("STATS ")
    case(f"{w}SIGUSR1 at its first {at}(): its STATS lines, then exit 0 at SIGTERM",
         out is not None and p.returncode == 0 and n == 2 * workers,
         f"exit {p.returncode}, {n} STATS lines, want {2 * workers}")

for workers in [1] if kind == "udp" else [1, 2]:
    w = f"--workers {workers}: " if kind == "tcp" else ""
    for ign in [(), (signal.SIGINT,)]:
        p = start(workers, ignore=ign)
        lines = ready(p)
        if lines is None:
            case(f"{w}ready", False, f"exit {p.returncode}")
            continue
        port = int(re.search(r"listening on 127\.0\.0\.1:(\d+)", lines[-1]).group(1))
        os.killpg(p.pid, signal.SIGINT)
        if not ign:
            out = ends(p, 3)
            case(f"{w}SIGINT to its group: exit 0 within 3 s with a STATS line",
                 out is not None and p.returncode == 0 and "STATS " in out,
                 "still running 3 s later" if out is None else f"exit {p.returncode}: {out[-400:]}")
            continue
        # a SIGUSR1 after it: its lines come once the SIGINT, a lower
        # signal, was read if it ever is
        os.killpg(p.pid, signal.SIGUSR1)
        got = stats_lines(p, workers, 3)
        ok = got and p.poll() is None and serves(port)
        p.send_signal(signal.SIGTERM)
        out = ends(p, 3)
        case(f"{w}SIGINT inherited as ignored, then a SIGINT to its group: serves on, "
             "exit 0 at SIGTERM", ok and out is not None and p.returncode == 0,
             f"STATS lines after SIGUSR1: {got}, still serving: {ok}, exit {p.returncode}")

if kind == "tcp":
    p = start(2, ignore=(signal.SIGCHLD,))
    if ready(p) is None:
        case("SIGCHLD inherited as ignored: ready", False, f"exit {p.returncode}")
    else:
        p.send_signal(signal.SIGTERM)
        out = ends(p, 5)
        case("--workers 2, SIGCHLD inherited as ignored: exit 0 within 5 s of SIGTERM",
             out is not None and p.returncode == 0 and out.count("STATS ") == 2,
             "still running 5 s later" if out is None else f"exit {p.returncode}: {out[-400:]}")

    p = start(2)
    if ready(p) is None:
        case("--workers 2: ready", False, f"exit {p.returncode}")
    else:
        p.kill()
        p.wait()
        codes, left = reap_orphans(3)
        case("--workers 2, the parent killed: each worker exits 0 within 3 s",
             left == 0 and codes == [0, 0], f"exit statuses {codes}, {left} still running")

    # (no pipe: a worker left running would hold it open)
    p = start(3, {"LD_PRELOAD": old_shim, "FORK_FAIL_AFTER": "1"}, out=subprocess.DEVNULL)
    try:
        rc = p.wait(timeout=3)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "none within 3 s"
    codes, left = reap_orphans(3)
    case("--workers 3, the second fork() failing: exit 1, no worker left",
         rc == 1 and left == 0, f"exit {rc}, {left} workers still running 3 s later")

if fails:
    print(f"FAIL [{name}]: {len(fails)} cases")
    sys.exit(1)
print(f"PASS [{name}]")
