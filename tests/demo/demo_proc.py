"""tests/demo/demo_proc.py - what the demo's Python tests do with a server
process they started: wait for its ready line, wait for it to exit; and
the processes a test left behind.
"""
import os
import re
import signal
import subprocess
import sys

READY = r"listening on 127\.0\.0\.1:(\d+)"


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


def stop_clean(srv, log, fail):
    """SIGCONT and SIGTERM to @srv (if it runs), its stdout appended to
    @log; calls @fail unless it exits 0 within 5 s with a STATS line that
    leaves no connection and no timer. Returns that last STATS line."""
    if srv.poll() is None:
        srv.send_signal(signal.SIGCONT)
        srv.send_signal(signal.SIGTERM)
    try:
        out, _ = srv.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        srv.kill()
        out, _ = srv.communicate()
        log.append(out)
        fail("the server still ran 5 s after SIGTERM")
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
