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

[ $fails -eq 0 ] || exit 1
echo "demo-mem: all checks passed"
