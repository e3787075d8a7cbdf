#!/usr/bin/env bash
# tests/demo/demo_mem_test.sh - scripts/demo-mem.sh's report on made-up
# samples: the memory a run took is divided by the connections held at
# once (the generator's RESULT held_max=), not by those it opened. A run
# paced by --rate whose timeout is shorter than its opening holds fewer
# than it opens (scripts/demo.sh --idle-ms 500, retried at 1,250 a
# second: 10,000 opened, 5,083 held), and was said to cost half of what
# each held connection did. Exit 0 pass, 1 fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/demo-mem.sh
. "$here/../../scripts/demo-mem.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-demo-mem.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# seconds rss_kb slab_kb ctxt: +5000 KiB of RSS, +50000 KiB of slab at peak
printf '%s\n' '100.0 2000 400000 10' '101.0 7000 450000 20' '102.0 4000 420000 30' >"$tmp/memory"
printf '%s\n' 'idle-load: 10000 connections' \
  'RESULT conns=10000 silent=5000 rate=1250 open_s=8.000 held_max=5000 wall_s=9.000 invalid=0 pass=1' \
  'PASS' >"$tmp/log"

line=$(mem_report 10000 "$tmp/memory" "$tmp/log")
case $line in
  *"+5000 KiB at peak = 1024 B a connection (its own; 5000 held at most)"*"+50000 KiB = 10240 B a connection"*) ;;
  *) fail "held 5000 of 10000 opened: $line" ;;
esac
# no RESULT line (a generator that ended without one), or no held_max= in
# it: the connections opened
: >"$tmp/empty"
line=$(mem_report 10000 "$tmp/memory" "$tmp/empty")
case $line in
  *"= 512 B a connection (its own; 10000 held at most)"*) ;;
  *) fail "no RESULT: $line" ;;
esac
line=$(mem_report 10000 "$tmp/memory")
case $line in
  *"= 512 B a connection"*) ;;
  *) fail "no log: $line" ;;
esac
[ "$(mem_report 10000 "$tmp/none" "$tmp/log")" = "memory: no samples" ] || fail "no samples"
# mem_held, which scripts/demo-peers.sh's summary divides by too (it
# divided by the connections opened, and called them held): the
# RESULT's held_max=, else the number given (no log, no RESULT line, or
# held_max=0)
[ "$(mem_held 10000 "$tmp/log")" = 5000 ] || fail "mem_held: $(mem_held 10000 "$tmp/log"), want 5000"
printf 'RESULT conns=10000 held_max=0 wall_s=1.000\n' >"$tmp/zero"
for f in empty none zero; do
  [ "$(mem_held 10000 "$tmp/$f")" = 10000 ] || fail "mem_held ($f): $(mem_held 10000 "$tmp/$f"), want 10000"
done

# the slab's source, in the samples' fifth column, names what the kernel's
# figure counts: the sockets' caches (s), or the whole slab (m, or none
# given), which counts whatever else the machine allocated meanwhile
for src in s m; do
  sed "s/\$/ $src/" "$tmp/memory" >"$tmp/memory.$src"
done
case $(mem_report 10000 "$tmp/memory.s" "$tmp/log") in
  *"; kernel socket slab +50000 KiB = 10240 B a connection (both ends)") ;;
  *) fail "socket caches: $(mem_report 10000 "$tmp/memory.s" "$tmp/log")" ;;
esac
for f in memory.m memory; do
  case $(mem_report 10000 "$tmp/$f" "$tmp/log") in
    *"; kernel slab +50000 KiB = 10240 B a connection (both ends, and all else the machine allocated meanwhile)") ;;
    *) fail "whole slab ($f): $(mem_report 10000 "$tmp/$f" "$tmp/log")" ;;
  esac
done
# a live sample: five fields, the slab from the sockets' caches where
# /proc/slabinfo can be read (root), else from /proc/meminfo
read -r t rss slab ctxt src rest < <(mem_sample $$)
want=m
grep -Eqs '^(TCP|TCPv6|request_sock_TCP|request_sock_TCPv6|tw_sock_TCP|tw_sock_TCPv6|sock_inode_cache) ' /proc/slabinfo && want=s
[ "$src" = "$want" ] && [ -z "$rest" ] && [ "$slab" -ge 0 ] 2>/dev/null && [ "$rss" -gt 0 ] && [ "$ctxt" -ge 0 ] && [ -n "$t" ] ||
  fail "a live sample: $(mem_sample $$), want the source $want"

[ $fails -eq 0 ] || exit 1
echo "demo-mem: all checks passed"
