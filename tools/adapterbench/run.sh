#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/adapterbench/run.sh - host-loop timers against libtwheel through
# each adapter, same run, pinned to one CPU: runs tools/bench's
# bench-peer-<host> (native timers) and adapterbench-<host> on rearm and
# add_cancel, and prints a Markdown table of medians with min-max.
#
# usage: tools/adapterbench/run.sh [BUILD_DIR] [-- ARGS...]
#   BUILD_DIR  a release build of the repository (default: a fresh one in
#              a temporary directory)
#   ARGS       passed to every helper, e.g. -- --reps 7 --n 100000
# environment: BENCH_CPU, the CPU to pin to (default 1)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
if [ -z "$build" ]; then
	build=$(mktemp -d /tmp/twheel-adapterbench.XXXXXX)
	meson setup "$build" "$src" -Dbuildtype=release -Dtools=true -Dtests=false >/dev/null
fi
ninja -C "$build" >/dev/null
cpu=${BENCH_CPU:-1}
raw=$(mktemp)
for h in uv:libuv ev:libev event:libevent epoll: asio:asio; do
	a=${h%%:*} p=${h#*:}
	if [ -n "$p" ] && [ -x "$build/tools/bench/bench-peer-$p" ]; then
		taskset -c "$cpu" "$build/tools/bench/bench-peer-$p" --workload rearm,add_cancel "$@" >>"$raw"
	fi
	if [ -x "$build/tools/adapterbench/adapterbench-$a" ]; then
		taskset -c "$cpu" "$build/tools/adapterbench/adapterbench-$a" "$@" >>"$raw"
	fi
done
grep -E '^(FAIL|SKIP)' "$raw" >&2 || true
echo "| workload | N | implementation | ns/op median | min–max |"
echo "| --- | --- | --- | --- | --- |"
grep '^RESULT' "$raw" | sort -k2,2 -s | awk '{
	n = 0
	for (i = 6; i <= NF; i++) v[n++] = $i + 0
	for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	med = n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
	printf "| %s | %s | %s | %.1f | %.1f–%.1f |\n", $2, $4, $3, med, v[0], v[n - 1]
}'
rm -f "$raw"
