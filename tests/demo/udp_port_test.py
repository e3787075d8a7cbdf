#!/usr/bin/env python3
# tests/demo/udp_port_test.py - the UDP server's port is free once the
# server has exited after SIGTERM.
#
# usage: udp_port_test.py UDP-SESSION-SERVER
#
# 20 times: start the server on a free port, wait for its ready line,
# SIGTERM it, reap it (exit 0 within 3 s), then bind a UDP socket on its
# port. Its multishot poll held the socket, and the ring's close let go
# of it only after the process had exited (the kernel tears a ring down in
# the background): 79 of 100 binds right after the exit failed "Address
# already in use", and scripts/demo.sh's next try of a --udp run, on the
# same port, said "the server did not start". Now the poll is cancelled
# and the loop stops when it has ended.
# Exit 0 pass, 1 fail, 77 skip (io_uring refused).
import re
import socket
import subprocess
import sys

server = sys.argv[1]
ROUNDS = 20
busy = 0
for i in range(ROUNDS):
    p = subprocess.Popen([server, "--port", "0", "--idle-ms", "200", "--max-sessions", "100"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = p.stdout.readline()
    m = re.search(r"ready: listening on 127\.0\.0\.1:(\d+), udp", line)
    if not m:
        rc = p.wait(timeout=10)
        if rc == 77:
            print("SKIP: the kernel refuses io_uring or what the server needs:", line.strip())
            sys.exit(77)
        print(f"FAIL: no ready line (exit {rc}): {line.strip()}")
        sys.exit(1)
    port = int(m.group(1))
    p.terminate()
    try:
        rc = p.wait(timeout=3)
    except subprocess.TimeoutExpired:
        p.kill()
        print(f"FAIL: round {i}: the server did not exit within 3 s of SIGTERM")
        sys.exit(1)
    rest = p.stdout.read()
    if rc != 0:
        print(f"FAIL: round {i}: exit {rc} after SIGTERM:\n{rest}")
        sys.exit(1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        busy += 1
        print(f"round {i}: port {port} still bound after the server exited: {e}")
    s.close()
if busy:
    print(f"FAIL: {busy} of {ROUNDS} ports still bound right after the server exited")
    sys.exit(1)
print(f"PASS: {ROUNDS} of {ROUNDS} ports free as soon as the server had exited")
