#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/loopbench/run.sh - build loopbench (release) and run the real-time
# workloads (docs/bench.md) on twheel-uring, libuv, libev and Netty,
# pinned with taskset. Extra arguments go to loopbench (e.g. --reps 7,
# --workload lateness, --impl twheel,netty, --quick).
#
# usage: tools/loopbench/run.sh [BUILD_DIR] [loopbench args...]
#   BUILD_DIR defaults to /tmp/twheel-loopbench-build; CPUS (default 0,1)
#   selects the cores; results go to $OUT (default /tmp/twheel-loopbench).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
# liburing, libuv, libev, a JDK and Netty for the peers
"$src/scripts/deps.sh" bench
build=/tmp/twheel-loopbench-build
case "${1-}" in
	--*|"") ;;
	*) build=$1; shift ;;
esac
cpus=${CPUS:-0,1}
out=${OUT:-/tmp/twheel-loopbench}
mkdir -p "$out"

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$src" --buildtype=release -Dtools=true -Dtests=false -Dcpp=false \
		-Dexamples=false >/dev/null
fi
ninja -C "$build" tools/loopbench/loopbench >/dev/null

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -sr), $(nproc) CPUs, pinned to $cpus"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c "$cpus" "$build/tools/loopbench/loopbench" \
	--java-src "$src/tools/loopbench" --csv "$out/loopbench.csv" "$@" \
	| tee "$out/loopbench.md"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
