"""tests/demo/demo_proc.py - what the demo's Python tests do with the
processes they start: read a server's ready line, wait for it to exit,
and find the processes left behind (as their subreaper).
"""
import ctypes
import os
import re
import signal
import subprocess
import sys
import time

READY = r"listening on 127\.0\.0\.1:(\d+)"
PR_SET_CHILD_SUBREAPER = 36


def read_line(srv):
    """The next line of @srv's stdout (a pipe), with its newline; '' at
    its end. Read from the pipe a byte at a time, so that nothing after
    the line is taken from it: srv.stdout reads ahead, and what it holds
    is lost to communicate() with a timeout (stop_clean(), exit_within()),
    which reads the pipe itself (the STATS lines written just after a
    ready line were lost so)."""
    line, fd = b"", srv.stdout.fileno()
    while not line.endswith(b"\n"):
        c = os.read(fd, 1)
        if not c:
            break
        line += c
    return line.decode(errors="replace")


def ready_port(srv, name, fail, pattern=READY, skip=None, log=None):
    """The port in @srv's ready line (@pattern's group 1, read from its
    stdout by read_line(), each line appended to @log if given). Exits 77
    (SKIP) if a line contains @skip, or if the server exits 77 (io_uring
    refused); calls @fail if it exits without a ready line."""
    lines = [] if log is None else log
    while line := read_line(srv):
        lines.append(line)
        if skip and skip in line:
            srv.kill()
            print(f"SKIP [{name}]: {line.strip()}")
            sys.exit(77)
        m = re.search(pattern, line)
        if m:
            return int(m.group(1))
    rc = srv.wait()
    if rc == 77:
        print(f"SKIP [{name}]: io_uring refused")
        sys.exit(77)
    fail(f"the server exited ({rc}) without a ready line: {''.join(lines)}")


def cpu_wait(pid):
    """Seconds the main thread of @pid has waited for a CPU, runnable
    (run_delay, /proc/PID/schedstat); 0 where /proc does not say."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def stop_clean(srv, log, fail, secs=5.0):
    """SIGCONT and SIGTERM to @srv (if it runs), its stdout appended to
    @log; calls @fail unless it exits 0 within @secs with a STATS line
    that leaves no connection and no timer. Returns that last STATS line.
    The time it spent waiting for a CPU (a loaded machine's, not the
    server's) does not count, up to 60 s in all."""
    if srv.poll() is None:
        srv.send_signal(signal.SIGCONT)
        srv.send_signal(signal.SIGTERM)
    start, waited0 = time.monotonic(), cpu_wait(srv.pid)
    while True:
        try:
            out, _ = srv.communicate(timeout=min(secs, 0.5))
            break
        except subprocess.TimeoutExpired:  # retried: no output is lost
            took, waited = time.monotonic() - start, cpu_wait(srv.pid) - waited0
            if took - waited >= secs or took >= 60:
                srv.kill()
                out, _ = srv.communicate()
                log.append(out)
                fail(f"the server still ran {took:.1f} s after SIGTERM ({waited:.1f} s of them waiting for a CPU)")
    log.append(out)
    stats = [s for s in "".join(log).splitlines() if s.startswith("STATS ")]
    if srv.returncode != 0 or not stats:
        fail(f"the server exited with {srv.returncode}, STATS lines {len(stats)}: {''.join(log)}")
    if " conns=0 timers=0 " not in stats[-1]:
        fail(f"connections or timers left at exit: {stats[-1]}")
    return stats[-1]


def exit_within(srv, err, secs, fail, what):
    """@srv's stdout once it exits within @secs; else kill it and call
    @fail(@what and the size of its stderr, kept in the file @err, its
    first 2,000 characters)."""
    try:
        out, _ = srv.communicate(timeout=secs)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.communicate()
        err.seek(0, os.SEEK_END)
        size = err.tell()
        err.seek(0)
        fail(f"{what} ({size} bytes on stderr)", err.read(2000))
    return out


def subreaper():
    """Make this process the subreaper of the processes it starts, so that
    those orphaned (their parent killed or gone) are reparented to it, not
    to init: children(os.getpid()) and reap_orphans() see them. False if
    the kernel refuses."""
    return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def children(ppid):
    """The pids of the processes whose parent is @ppid, from /proc. One
    that exits while the list is read is left out (its /proc entry went
    away between the listing and the read: FileNotFoundError, which
    failed demo_load_parent_killed once)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if stat.rsplit(") ", 1)[-1].split()[1] == str(ppid):
            pids.append(int(d))
    return pids


def reap_orphans(secs):
    """Wait up to @secs for the processes reparented to this one (its
    subreaper()) to exit, reaping each; then SIGKILL and reap those still
    running. Their exit statuses (os.waitstatus_to_exitcode()), and how
    many still ran."""
    codes, t0 = [], time.monotonic()
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return codes, 0
        if pid:
            codes.append(os.waitstatus_to_exitcode(st))
            continue
        if time.monotonic() - t0 > secs:
            left = children(os.getpid())
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            reap_orphans(2)
            return codes, len(left)
        time.sleep(0.02)
