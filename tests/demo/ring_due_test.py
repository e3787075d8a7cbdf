#!/usr/bin/env python3
"""tests/demo/ring_due_test.py - a connection whose data waits for a
provided buffer when its idle timer fires is read, not closed unread.

usage: ring_due_test.py SERVER NAME

The server (idle-server-c or idle-server) runs with a provided-buffer
ring of one buffer and a 300 ms idle timeout, in echo mode, then in HTTP
mode. 30 connections are opened and accepted, the server is stopped
(SIGSTOP), 20 of them send a complete message (a line; a request head)
and, in HTTP mode, 10 a partial head, and the server goes on (SIGCONT)
0.6 s later, past every connection's deadline. The request heads are
longer than a receive buffer (512 bytes), so the first read of each
completes nothing and the rest must be read before the close. Every message came 0.3 s
before its connection's deadline, so each must get its reply before the
close; the partial heads complete nothing, so those connections must be
closed, unanswered, within 1 s. One buffer serves one receive at a time:
the others wait for it (ENOBUFS), and their timers fired first. The old
servers closed every waiting connection at once, its message unread
(19 of 20, and 1,976 of 3,000 with the default ring of 1,024 buffers),
and, the first fix in, the connection that had read half a head, its
buffer handed on before it read the rest. Every fourth message has an
urgent byte (MSG_OOB) after its 20th byte, where a read stops: FIONREAD
counts the bytes up to an urgent byte only, so a server that asked it
whether the rest of a head waited found none there and closed the
connection unanswered (5 of 20 heads).

Then, in HTTP mode, a flood of empty lines (they complete no message)
sent as fast as the server reads them must be closed one timeout after
it began: the first fix read on, deferred, while bytes waited, for ever.

In echo mode, a connection whose only unread byte is urgent (MSG_OOB),
handed the buffer after another's message, must not hold it: a later
connection's line must be echoed before this one is closed, within one
more timeout. Its receive, handed the buffer, found nothing to read and
waited: first for ever (its close, put off until that receive completed,
never came, nor any other connection's read), then until its timer fired
a second time, the later connection's line unread and that connection
closed by its own timer meanwhile. And such a connection whose timer
ran while it waited for the buffer (the close put off) is closed when
its handed receive finds nothing, by no run of its timer: STATS fire_n
must count the one run (the old servers counted a second, 0 us late).

In heartbeat mode, a connection with an urgent byte alone, woken for
the buffer a PING read gave back, must not keep its claim on it: the
PING of a connection refused after it is answered at once (woken, the
receive waited for data, and that PING went unread until the close).

After SIGTERM the server must exit 0 with no connection and no timer
left, and STATS `deferred` must count the closes put off. Its own
figures must tell what happened (--trace, STATS): every idle close's
trace line reads deadline <= fire <= FIN <= freed, a close put off giving
the deadline and the timer run that put it off (the old servers gave the
deadline re-armed for the read, after the close), and fire_max_us and
fin_max_us hold the timers that ran, and the closes that came, after the
stop, at least 0.3 s late (the old servers counted none of those runs,
and measured a close the read made from that later deadline: on time).
Exit 0 pass, 1 fail, 77 skip (io_uring or the provided-buffer ring refused).
"""
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

from demo_proc import ready_port, stop_clean

server_path, name = sys.argv[1], sys.argv[2]
IDLE_MS = 300


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


def read_all(socks, within):
    """Each of @socks read until its end (or @within s in all): {sock: (bytes, ended)}."""
    got = {s: b"" for s in socks}
    ended = set()
    start = time.monotonic()
    while len(ended) < len(socks) and time.monotonic() - start < within:
        r, _, _ = select.select([s for s in socks if s not in ended], [], [], 0.05)
        for s in r:
            try:
                data = s.recv(4096)
            except ConnectionResetError:
                data = b""
            got[s] += data
            if not data:
                ended.add(s)
    return {s: (got[s], s in ended) for s in socks}


def flood(port, what):
    """Empty lines before a request line, sent as fast as the server reads
    them for 2 s: they complete no message, so the connection must be
    closed one timeout after it opened (0.6 s slack). Deferred once its
    timer fired with bytes waiting, it read on while more came, and was
    never closed."""
    s = socket.create_connection(("127.0.0.1", port))
    start = time.monotonic()
    closed = None
    while time.monotonic() - start < 2.0:
        try:
            s.sendall(b"\r\n" * 4096)
        except (BrokenPipeError, ConnectionResetError):
            closed = time.monotonic() - start
            break
    s.close()
    if closed is None or closed > IDLE_MS / 1000 + 0.6:
        fail(f"{what}: a flood of empty lines kept its connection open "
             f"{'2 s' if closed is None else f'{closed:.3f} s'} at a {IDLE_MS} ms timeout")
    print(f"{what}: a flood of empty lines closed after {closed:.3f} s")


def urgent(srv, port, what):
    """A connection whose only unread byte is urgent (MSG_OOB): the ring's
    buffer goes to another's message first (the server stopped while both
    came), this one's receive fails ENOBUFS and is handed the buffer, then
    finds nothing to read (the urgent byte is skipped). It must not hold
    the buffer: a later connection's line must be echoed before this one
    is closed (as idle, within one more timeout at most), and the buffer
    must come back. Its receive waited, holding the buffer: first for
    ever, every other connection unread; then until its timer fired a
    second time, 2 timeouts after it opened."""
    other = socket.create_connection(("127.0.0.1", port))
    oob = socket.create_connection(("127.0.0.1", port))
    late = socket.create_connection(("127.0.0.1", port))
    time.sleep(0.05)  # all accepted, each receive waiting for data
    srv.send_signal(signal.SIGSTOP)
    other.send(b"first\n")
    oob.send(b"!", socket.MSG_OOB)
    time.sleep(0.05)
    srv.send_signal(signal.SIGCONT)
    within = 2 * IDLE_MS / 1000 + 0.6
    other.settimeout(within)
    try:
        first = other.recv(16)
    except OSError:
        first = b""
    late.send(b"late\n")
    t0 = time.monotonic()
    late.settimeout(within)
    echo = b""
    try:
        while len(echo) < 5:
            got = late.recv(16)
            if not got:
                break
            echo += got
    except OSError:
        pass
    echo_t = time.monotonic() - t0
    # the old servers handed the buffer on only when it closed: its FIN
    # came before the echo, so it is readable (at its end) now
    oob_open = not select.select([oob], [], [], 0)[0]
    closed = select.select([oob], [], [], max(0.0, within - echo_t))[0]
    closed_t = time.monotonic() - t0
    for s in (other, oob, late):
        s.close()
    if first != b"first\n":
        fail(f"{what}: the first connection's line unanswered (got {first!r})")
    if not closed:
        fail(f"{what}: a connection with an urgent byte alone unread still open {within:.1f} s "
             f"after the server went on, at a {IDLE_MS} ms timeout (its close put off for ever)")
    if echo != b"late\n":
        fail(f"{what}: a later connection's line unanswered (got {echo!r}): the buffer still held")
    if not oob_open:
        fail(f"{what}: a later connection's line echoed {echo_t:.3f} s after it was sent, once the "
             f"connection with an urgent byte alone had been closed: that one held the buffer until "
             f"its close")
    print(f"{what}: a later line echoed after {echo_t:.3f} s; an urgent byte alone closed after "
          f"{closed_t:.3f} s")


def stats(port):
    """The server's STATS line, asked on a connection of its own: {key: int}."""
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.sendall(b"STATS\n")
        c.settimeout(2.0)
        line = b""
        while not line.endswith(b"\n"):
            got = c.recv(4096)
            if not got:
                break
            line += got
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line.decode())}


def urgent_due(srv, port, what):
    """A connection whose only unread byte is urgent, its close put off
    (its timer ran while it waited for the buffer another's line held),
    then handed the buffer: its receive finds nothing, and it is closed
    there, by no run of its timer. So its one timer run is the one fire
    STATS counts: the old servers closed it through the timer's callback,
    which counted a second run against the deadline re-armed for the read
    (in the future: a fire 0 us late, STATS fire_n one too many)."""
    before = stats(port)
    line = socket.create_connection(("127.0.0.1", port))
    oob = socket.create_connection(("127.0.0.1", port))
    time.sleep(0.05)  # both accepted, each receive waiting for data
    srv.send_signal(signal.SIGSTOP)
    line.send(b"first\n")  # first: its receive takes the buffer
    time.sleep(0.01)
    oob.send(b"!", socket.MSG_OOB)
    time.sleep(IDLE_MS / 1000 + 0.1)  # both deadlines pass while the server is stopped
    srv.send_signal(signal.SIGCONT)
    line.settimeout(2.0)
    try:
        first = line.recv(16)
    except OSError:
        first = b""
    closed = select.select([oob], [], [], 2 * IDLE_MS / 1000 + 0.6)[0]
    line.close()
    oob.close()
    if first != b"first\n":
        fail(f"{what}: a line sent {IDLE_MS} ms before its deadline unanswered (got {first!r})")
    if not closed:
        fail(f"{what}: a connection with an urgent byte alone unread still open")
    after = stats(port)
    d = {k: after[k] - before[k] for k in ("fire_n", "deferred", "idle_closed")}
    if d != {"fire_n": 1, "deferred": 1, "idle_closed": 1}:
        fail(f"{what}: one timer run that put a close off, then the close made by the read: "
             f"STATS counted {d} (fire_n counts the timer's runs)")
    print(f"{what}: a put-off close made by the read: {d}")


def woken_urgent():
    """Heartbeat mode: a PING read hands its buffer back to the ring at
    once, before the same batch's refusals (ENOBUFS) are seen; the next
    of those, a connection whose only unread byte is urgent, is then
    woken for the buffer, and finds nothing to read. It must not wait with
    its claim on the buffer: the PING of the connection refused after it
    must be answered at once. Woken with POLL_FIRST and without
    MSG_DONTWAIT, the receive waited for data, no other connection was
    woken, and that PING was unread until the connection was closed
    (reset, 0.52 s later at a 300 ms timeout): no timer may find data
    waiting for a buffer (STATS deferred 0), however slow this client."""
    srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", str(IDLE_MS), "--ring-bufs", "1",
                            "--heartbeat"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    port = ready_port(srv, name, fail, r"ready: listening on 127\.0\.0\.1:(\d+),",
                      skip="no provided-buffer ring", log=log)
    try:
        first, oob, last = (socket.create_connection(("127.0.0.1", port)) for _ in range(3))
        time.sleep(0.05)  # all accepted, each receive waiting for data
        srv.send_signal(signal.SIGSTOP)
        first.send(b"PING\n")  # in this order: the receives complete in it
        time.sleep(0.01)
        oob.send(b"!", socket.MSG_OOB)
        time.sleep(0.01)
        last.send(b"PING\n")
        time.sleep(0.01)
        srv.send_signal(signal.SIGCONT)
        t0 = time.monotonic()
        got = b""
        if select.select([last], [], [], 2.0)[0]:
            try:
                got = last.recv(16)
            except ConnectionResetError:
                got = b"(reset)"
        took = time.monotonic() - t0
        for s in (first, oob, last):
            s.close()
    finally:
        stats = stop_clean(srv, log, fail)
    deferred = re.search(r" deferred=(\d+) ", stats)
    if got != b"PONG\n" or not deferred or deferred.group(1) != "0":
        fail(f"--heartbeat: a PING behind a woken receive with an urgent byte alone to read got "
             f"{got!r} in {took:.3f} s, STATS deferred {deferred.group(1) if deferred else 'missing'} "
             f"(no timer may find data waiting): the woken receive kept its claim on the buffer")
    print(f"--heartbeat: a PING behind a woken urgent-byte receive answered after {took:.3f} s")


def check_trace(path, slow_ports, what):
    """Every line of the server's trace (peer accept_ns accept_queue_ms
    deadline_ns fire_ns fin_ns freed_ns; fin 0 if the close freed it at
    once) in order; the partial heads' closes, put off, at least the stop
    late."""
    lines = open(path).read().split()
    rows = [lines[i:i + 7] for i in range(0, len(lines), 7)]
    if not rows or any(len(r) != 7 for r in rows):
        fail(f"{what}: trace {path}: {len(lines)} words, not lines of 7")
    seen = set()
    for r in rows:
        port = int(r[0].rsplit(":", 1)[1])
        dl, fire, fin, freed = (int(x) for x in r[3:7])
        if not dl <= fire <= (fin or fire) <= freed:
            fail(f"{what}: trace line out of order (deadline <= fire <= FIN <= freed): {' '.join(r)}")
        if port in slow_ports:
            seen.add(port)
            if fire - dl < IDLE_MS * 1_000_000:
                fail(f"{what}: a partial head's close traced {(fire - dl) / 1e6:.1f} ms after its "
                     f"deadline, its timer run after a stop that made it {IDLE_MS} ms late: {' '.join(r)}")
    if len(seen) != len(slow_ports):
        fail(f"{what}: {len(slow_ports) - len(seen)} of {len(slow_ports)} partial heads' closes not traced")


def run(mode, message, reply_ok, partial):
    tmp = tempfile.TemporaryDirectory()
    prefix = f"{tmp.name}/trace"
    srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", str(IDLE_MS), "--ring-bufs", "1",
                            "--trace", prefix] + mode,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    port = ready_port(srv, name, fail, r"ready: listening on 127\.0\.0\.1:(\d+),",
                      skip="no provided-buffer ring", log=log)
    what = " ".join(mode) or "echo"
    try:
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
        time.sleep(0.05)  # all accepted, each receive waiting for data
        srv.send_signal(signal.SIGSTOP)
        talkers = socks[:20]
        slow = socks[20:] if partial else []
        for i, s in enumerate(talkers):
            if i % 4:
                s.send(message)
            else:  # an urgent byte amid the message: a read stops at it
                s.send(message[:20])
                s.send(b"!", socket.MSG_OOB)
                s.send(message[20:])
        for s in slow:
            s.send(partial)
        time.sleep(2 * IDLE_MS / 1000)  # every deadline passes while the server is stopped
        srv.send_signal(signal.SIGCONT)
        res = read_all(talkers + slow, 3.0)
        unread = [res[s][0] for s in talkers if not reply_ok(res[s][0])]
        if unread:
            fail(f"{what}: {len(unread)} of {len(talkers)} messages sent {IDLE_MS} ms before their "
                 f"deadline not answered (got {unread[0]!r}): closed as idle, the message unread")
        slow_ports = {s.getsockname()[1] for s in slow}
        kept = [s for s in slow if res[s][0] or not res[s][1]]
        if kept:
            fail(f"{what}: {len(kept)} of {len(slow)} partial heads answered or kept open "
                 f"(got {res[kept[0]][0]!r}, ended {res[kept[0]][1]})")
        for s in socks:
            s.close()
        if partial:
            flood(port, what)
        else:
            urgent(srv, port, what)
            urgent_due(srv, port, what)
    finally:
        last = stop_clean(srv, log, fail)
    m = re.search(r" deferred=(\d+) ", last)
    if not m or int(m.group(1)) == 0:
        fail(f"{what}: STATS deferred {m.group(1) if m else 'missing'}: {last.strip()}")
    for key in ("fire_max_us", "fin_max_us"):
        f = re.search(rf" {key}=(\d+) ", last)
        if not f or int(f.group(1)) < IDLE_MS * 1000:
            fail(f"{what}: STATS {key} {f.group(1) if f else 'missing'} after timers that ran, and "
                 f"closes that came, at least {IDLE_MS} ms late (the server stopped): {last.strip()}")
    check_trace(f"{prefix}.0", slow_ports, what)
    tmp.cleanup()
    print(f"{what}: {len(talkers)} answered, {len(slow)} partial closed, deferred={m.group(1)}")


run([], b"hello\n", lambda b: b == b"hello\n", None)
run(["--http"], b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"y" * 600 + b"\r\n\r\n",
    lambda b: b.startswith(b"HTTP/1.1 204 ") and b.endswith(b"\r\n\r\n"), b"GET / HTTP/1.1\r\nHo")
woken_urgent()
print(f"PASS [{name}]")
