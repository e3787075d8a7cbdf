#!/usr/bin/env python3
"""tests/demo/send_queue_test.py - a client that sends and never reads
holds a bounded amount of the kernel's memory in the server's socket.

usage: send_queue_test.py SERVER NAME

The server (idle-server-c or idle-server) runs in echo mode and in HTTP
mode (pipelined requests, each answered), with a 10 s idle timeout. A
client sends for 0.5 s, as fast as the server takes its bytes, and
never reads. The server sends one
reply at a time and reads nothing more until it went out, so what it
holds is its socket's send queue: the bytes written and not yet
acknowledged (tx_queue in /proc/net/tcp). Left to the kernel's
autotuning (up to net.ipv4.tcp_wmem's maximum, 4 MiB by default) it
reached about 4 MiB in each mode: 200 such clients held 731 MiB. The
listening socket's SO_SNDBUF, which accepted sockets inherit, bounds
it: at most 256 KiB here. After SIGTERM the server must exit 0 with no
connection and no timer left.
Exit 0 pass, 1 fail, 77 skip (io_uring refused).
"""
import socket
import subprocess
import sys
import time

from demo_proc import ready_port, stop_clean

server_path, name = sys.argv[1], sys.argv[2]
LIMIT = 256 * 1024


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


def tx_queue(server_port, client_port):
    """The server's socket's tx_queue (bytes), from /proc/net/tcp{,6}."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            for row in f.readlines()[1:]:
                cols = row.split()
                local, remote = cols[1].rsplit(":", 1)[1], cols[2].rsplit(":", 1)[1]
                if int(local, 16) == server_port and int(remote, 16) == client_port:
                    return int(cols[4].split(":")[0], 16)
    fail(f"no socket of port {server_port} to {client_port} in /proc/net/tcp")


def run(mode):
    srv = subprocess.Popen([server_path, "--port", "0", "--idle-ms", "10000"] + ([mode] if mode else []),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    port = ready_port(srv, name, fail, log=log)
    msg = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n" * 64 if mode == "--http" else b"hello\n" * 256
    c = socket.socket()
    c.connect(("127.0.0.1", port))
    c.setblocking(False)
    sent, most, start = 0, 0, time.monotonic()
    for tenth in range(1, 6):  # the queue read each 0.1 s: /proc/net/tcp is long on a busy machine
        while time.monotonic() < start + tenth / 10:
            try:
                sent += c.send(msg)
            except BlockingIOError:
                time.sleep(0.005)
        most = max(most, tx_queue(port, c.getsockname()[1]))
    print(f"{mode or 'echo'}: {sent} bytes sent in 0.5 s, none read; the server's send queue held {most} bytes at most")
    if sent < LIMIT:
        fail(f"{mode or 'echo'}: only {sent} bytes sent: the server stopped reading before its queue could grow")
    if most > LIMIT:
        fail(f"{mode or 'echo'}: the server's send queue held {most} bytes, more than {LIMIT}")
    c.close()
    stop_clean(srv, log, fail)


for m in ("--http", ""):
    run(m)
print(f"PASS [{name}]")
