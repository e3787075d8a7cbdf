#!/usr/bin/env python3
"""tests/demo/trace_test.py - --trace names each connection's peer by its
real address, IPv4 or IPv6, on the server's side and the generator's.

usage: trace_test.py SERVER IDLE_LOAD TRACE_JOIN NAME

1. The server (idle-server-c or idle-server) on ::1 with --trace and a
   300 ms idle timeout; three silent clients of our own, each closed as
   idle: the trace must hold exactly "[::1]:PORT" for each client's port.
   Both servers read the peer into an IPv4 address, and wrote
   "00000000:PORT" for every IPv6 peer.
2. idle-load --family 6 --trace against it, 20 silent connections:
   every line of its trace names "[::1]:PORT" too, and
   demo/trace_join.py joins all 20 with the server's (none without a
   match). idle-load also wrote a zero address for each.
3. The server on 127.0.0.2, the clients bound to 127.0.0.3:
   "127.0.0.3:PORT" for each (the form both sides now write).
After SIGTERM the server must exit 0 with no connection and no timer left.
Exit 0 pass, 1 fail, 77 skip (io_uring refused, or no ::1).
"""
import os
import re
import socket
import subprocess
import sys
import tempfile

from demo_proc import ready_port, stop_clean

server_path, load_path, join_path, name = sys.argv[1:5]


def fail(msg):
    print(f"FAIL [{name}]: {msg}")
    sys.exit(1)


def has_ipv6():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def server(tmp, bind, tag):
    prefix = os.path.join(tmp, "srv-" + tag)
    srv = subprocess.Popen([server_path, "--port", "0", "--bind", bind, "--idle-ms", "300",
                            "--trace", prefix],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    shown = "[::1]" if ":" in bind else bind
    port = ready_port(srv, name, fail, r"listening on " + re.escape(shown) + r":(\d+)", log=log)
    return srv, log, port, prefix


def trace_peers(prefix):
    """The first field of each line of the server's trace (worker 0)."""
    with open(prefix + ".0") as f:
        return [line.split()[0] for line in f if line.strip()]


def own_clients(tmp, family, bind, src, tag):
    srv, log, port, prefix = server(tmp, bind, tag)
    try:
        want = set()
        socks = []
        for _ in range(3):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.bind((src, 0))
            s.settimeout(5)
            s.connect((bind, port))
            p = s.getsockname()[1]
            want.add(f"[{src}]:{p}" if family == socket.AF_INET6 else f"{src}:{p}")
            socks.append(s)
        for s in socks:  # silent: each is closed as idle
            try:
                if s.recv(16) != b"":
                    fail(f"{tag}: a silent client got bytes")
            except socket.timeout:
                fail(f"{tag}: a silent client was not closed within 5 s")
            s.close()
    finally:
        stop_clean(srv, log, fail)
    got = trace_peers(prefix)
    if sorted(got) != sorted(want):
        fail(f"{tag}: the trace names the peers {sorted(got)}, not {sorted(want)}")
    print(f"{tag}: the trace names {', '.join(sorted(got))}")


def with_generator(tmp):
    srv, log, port, prefix = server(tmp, "::1", "gen")
    lprefix = os.path.join(tmp, "load")
    try:
        r = subprocess.run([load_path, "--family", "6", "--port", str(port), "--conns", "20",
                            "--silent", "100", "--idle-ms", "300", "--tolerance-ms", "250",
                            "--grace-ms", "3000", "--quiet", "--trace", lprefix],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        if r.returncode == 77:
            print(f"SKIP [{name}]: idle-load: io_uring refused")
            sys.exit(77)
        if r.returncode not in (0, 3):
            fail(f"idle-load exited {r.returncode}: {r.stdout}")
    finally:
        stop_clean(srv, log, fail)
    lines = []
    for path in sorted(os.listdir(tmp)):
        if path.startswith("load."):
            with open(os.path.join(tmp, path)) as f:
                lines += [line.split()[0] for line in f if line.strip()]
    bad = [a for a in lines if not re.fullmatch(r"\[::1\]:\d+", a)]
    if len(lines) != 20 or bad:
        fail(f"idle-load traced {len(lines)} connections (20 wanted), with wrong addresses {bad[:5]}")
    srv_peers = trace_peers(prefix)
    if sorted(srv_peers) != sorted(lines):
        fail(f"the server traced {sorted(srv_peers)[:5]}..., idle-load {sorted(lines)[:5]}...")
    j = subprocess.run([sys.executable, join_path, prefix, lprefix, "300"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    if j.returncode != 0 or "20 silent connections joined (0 without a match)" not in j.stdout:
        fail(f"trace_join.py: {j.stdout}")
    print("idle-load: 20 connections traced as [::1]:PORT on both sides, all 20 joined")


with tempfile.TemporaryDirectory() as tmp:
    ipv6 = has_ipv6()
    if ipv6:
        own_clients(tmp, socket.AF_INET6, "::1", "::1", "ipv6")
        with_generator(tmp)
    own_clients(tmp, socket.AF_INET, "127.0.0.2", "127.0.0.3", "ipv4")
    if not ipv6:
        print(f"SKIP [{name}]: no ::1 on this machine (IPv4 passed)")
        sys.exit(77)
print(f"PASS [{name}]")
