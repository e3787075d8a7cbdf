#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-cpp-servers.py CALLBACK_SERVER COROUTINE_SERVER [RUNS]

The C++ idle-timeout echo server, callbacks (cpp/examples/loop_server.cpp)
against coroutines (cpp/examples/co_server.cpp), in one run. Each server runs
pinned to CPU 0 (taskset), this driver to CPU 1; per run and server:

  memory  IDLE connections opened and left silent (idle timeout 60 s): the
          server's VmRSS growth divided by IDLE, in bytes per connection;
  cpu     CONNS connections, each sending a MSG-byte message and waiting
          for its echo, REQS requests in all: the server's CPU time
          (/proc/PID/schedstat, ns) divided by REQS.

The servers alternate within each run. Prints each run, then the median
(min-max) of each figure and of the coroutine/callback ratios per run."""
import os, resource, selectors, signal, socket, statistics, subprocess, sys, time

IDLE, CONNS, REQS, MSG = 5000, 64, 60000, 64


def start(path):
    p = subprocess.Popen(['taskset', '-c', '0', path, '--idle-ms', '60000', '0'],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    return p, int(line.rsplit(':', 1)[1])


def rss_kb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])


def cpu_ns(pid):
    with open(f'/proc/{pid}/schedstat') as f:
        return int(f.read().split()[0])


def nfds(pid):
    return len(os.listdir(f'/proc/{pid}/fd'))


def wait_fds(pid, n):
    end = time.monotonic() + 20
    while nfds(pid) < n and time.monotonic() < end:
        time.sleep(0.02)
    if nfds(pid) < n:
        sys.exit(f'server {pid}: {nfds(pid)} fds, expected {n}')


def memory(p, port):
    base_fds = nfds(p.pid)
    time.sleep(0.2)
    before = rss_kb(p.pid)
    socks = [socket.create_connection(('127.0.0.1', port)) for _ in range(IDLE)]
    wait_fds(p.pid, base_fds + IDLE)
    time.sleep(0.2)
    after = rss_kb(p.pid)
    for s in socks:
        s.close()
    end = time.monotonic() + 20
    while nfds(p.pid) > base_fds and time.monotonic() < end:
        time.sleep(0.02)
    return (after - before) * 1024 / IDLE


def cpu(p, port):
    sel = selectors.DefaultSelector()
    msg = b'x' * MSG
    socks = [socket.create_connection(('127.0.0.1', port)) for _ in range(CONNS)]
    got = {}
    for s in socks:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sel.register(s, selectors.EVENT_READ)
        got[s] = 0
    t0 = cpu_ns(p.pid)
    sent = done = 0
    for s in socks:
        s.sendall(msg)
        sent += 1
    while done < REQS:
        for key, _ in sel.select():
            s = key.fileobj
            data = s.recv(65536)
            if not data:
                sys.exit('server closed a connection')
            got[s] += len(data)
            while got[s] >= MSG:
                got[s] -= MSG
                done += 1
                if sent < REQS:
                    s.sendall(msg)
                    sent += 1
    t1 = cpu_ns(p.pid)
    for s in socks:
        s.close()
    return (t1 - t0) / REQS


def one(path):
    p, port = start(path)
    try:
        return memory(p, port), cpu(p, port)
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=20)
        if p.returncode != 0:
            sys.exit(f'{path}: exit status {p.returncode}')


def summary(xs, fmt):
    return f'{fmt % statistics.median(xs)} ({fmt % min(xs)}-{fmt % max(xs)})'


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    servers = {'callback': sys.argv[1], 'coroutine': sys.argv[2]}
    runs = int(sys.argv[3]) if len(sys.argv) == 4 else 5
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    os.sched_setaffinity(0, {1})
    print(f'IDLE={IDLE} CONNS={CONNS} REQS={REQS} MSG={MSG} runs={runs}; '
          'server on CPU 0, driver on CPU 1')
    res = {k: ([], []) for k in servers}
    for r in range(runs):
        order = list(servers) if r % 2 == 0 else list(servers)[::-1]
        for k in order:
            mem, ns = one(servers[k])
            res[k][0].append(mem)
            res[k][1].append(ns)
            print(f'run {r + 1} {k:9}: {mem:7.0f} B per idle connection, {ns:7.0f} ns CPU per request',
                  flush=True)
    for k in servers:
        print(f'{k:9}: memory {summary(res[k][0], "%.0f")} B per idle connection, '
              f'cpu {summary(res[k][1], "%.0f")} ns per request')
    cpu_ratio = [c / b for b, c in zip(res['callback'][1], res['coroutine'][1])]
    mem_ratio = [c / b for b, c in zip(res['callback'][0], res['coroutine'][0])]
    print(f'coroutine/callback: cpu {summary(cpu_ratio, "%.3f")}, memory {summary(mem_ratio, "%.3f")}')


if __name__ == '__main__':
    main()
