#!/usr/bin/env python3
"""demo/trace_join.py - where the lateness of silent connections goes.

Joins the per-connection traces of a server run with --trace SPREFIX and of
idle-load run with --trace LPREFIX (same machine, both CLOCK_MONOTONIC) on
the client's address:port, and splits each silent connection's lateness
(close seen - (connect submitted + timeout)) into:

  setup     connect submitted -> accept handled by the server, minus the
            time in the accept queue (SYN/handshake, generator submit lag)
  acceptq   time in the server's accept queue (TCP_INFO, jiffies)
  arm       accept handled -> timer armed beyond the timeout (should be ~0)
  fire      the server's timer callback ran - deadline (the server's lateness)
  fin       callback ran -> shutdown() returned (FIN sent)
  seen      FIN sent -> the generator reaped the close, split into
    deliver   FIN sent -> the client's kernel took it in (TCP_INFO, jiffies)
    reap      ...-> the generator reaped the completion (the generator's lag)

usage: trace_join.py SPREFIX LPREFIX IDLE_MS
"""
import glob
import sys


def pct(v, p):
    if not v:
        return 0.0
    v = sorted(v)
    k = max(1, min(len(v), int(p * len(v) + 0.999999)))
    return v[k - 1]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sp, lp, idle_ns = sys.argv[1], sys.argv[2], int(sys.argv[3]) * 1000000
    srv = {}
    for path in glob.glob(sp + '.*'):
        for line in open(path):
            f = line.split()
            if len(f) == 7:
                srv[f[0]] = [int(x) for x in f[1:]]
    parts = {k: [] for k in ('total', 'setup', 'acceptq', 'arm', 'fire', 'fin', 'seen', 'deliver', 'reap')}
    missing = 0
    for path in glob.glob(lp + '.*'):
        for line in open(path):
            f = line.split()
            if len(f) not in (4, 5):
                continue
            submit, est, seen = (int(x) for x in f[1:4])
            fin_in = int(f[4]) if len(f) == 5 else 0
            s = srv.get(f[0])
            if not s or not seen:
                missing += 1
                continue
            acc, accq_ms, deadline, fire, fin, _freed = s
            accq = accq_ms * 1000000
            parts['total'].append(seen - submit - idle_ns)
            parts['setup'].append(acc - submit - accq)
            parts['acceptq'].append(accq)
            parts['arm'].append(deadline - acc - idle_ns)
            parts['fire'].append(fire - deadline)
            parts['fin'].append(fin - fire)
            parts['seen'].append(seen - fin)
            if fin_in:
                parts['deliver'].append(fin_in - fin)
                parts['reap'].append(seen - fin_in)
    n = len(parts['total'])
    print(f'{n} silent connections joined ({missing} without a match)')
    print(f'{"ms":10s} {"p50":>9s} {"p90":>9s} {"p99":>9s} {"max":>9s} {"mean":>9s}')
    for k, v in parts.items():
        if not v:
            continue
        print(f'{k:10s} {pct(v, .5) / 1e6:9.2f} {pct(v, .9) / 1e6:9.2f} {pct(v, .99) / 1e6:9.2f} '
              f'{max(v) / 1e6:9.2f} {sum(v) / len(v) / 1e6:9.2f}')
    # the worst 1%: which part made them late
    tot = parts['total']
    idx = sorted(range(n), key=lambda i: tot[i])[-max(1, n // 100):]
    if idx:
        print('worst 1% (mean ms): ' + '  '.join(
            f'{k} {sum(parts[k][i] for i in idx) / len(idx) / 1e6:.2f}' for k in parts
            if len(parts[k]) == n))


if __name__ == '__main__':
    main()
