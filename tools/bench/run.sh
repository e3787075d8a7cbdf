#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/bench/run.sh - build libtwheel's benchmark suite in release mode in a
# temporary directory and run all of it pinned to one CPU, writing Markdown,
# CSV (and PNG charts with --plot) into an output directory.
#
# usage: tools/bench/run.sh [--plot] [--quick] [OUTDIR] [-- BENCH-ARGS...]
#   OUTDIR       default /tmp/twheel-bench
#   --plot       also draw the charts into OUTDIR/plots (needs gnuplot)
#   --quick      scaled-down sizes (a smoke run of a few seconds; no peers)
#   BENCH-ARGS   passed to bench as they are, e.g. -- --workload rearm --reps 9
# environment:
#   BENCH_CPU    the CPU to pin to with taskset (default 1)
#   BENCH_BUILD  build directory to (re)use instead of a fresh temporary one
#
# Writes OUTDIR/bench.md (the tables), OUTDIR/bench.csv (every row with all
# repetitions), OUTDIR/bench.log (progress and skips), OUTDIR/env.txt (the
# machine, compiler and git revision) and OUTDIR/plots/*.png.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
out=/tmp/twheel-bench
plot=0
quick=
while [ $# -gt 0 ]; do
	case "$1" in
	--plot) plot=1 ;;
	--quick) quick=--quick ;;
	--) shift; break ;;
	-h|--help) sed -n '4,20p' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) out=$1 ;;
	esac
	shift
done
cpu=${BENCH_CPU:-1}
# the peers (libev, libuv, libevent, Boost, Netty + a JDK) and gnuplot
"$src/scripts/deps.sh" bench
mkdir -p "$out"
out=$(cd "$out" && pwd)

build=${BENCH_BUILD:-}
if [ -z "$build" ]; then
	build=$(mktemp -d /tmp/twheel-bench-build.XXXXXX)
	trap 'rm -rf "$build"' EXIT
fi
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$src" -Dbuildtype=release -Dtools=true -Dtests=false -Dexamples=false >"$out/meson-setup.log" 2>&1 ||
		{ cat "$out/meson-setup.log" >&2; exit 1; }
fi
# build only the benchmark and its peer helpers
targets=$(ninja -C "$build" -t targets all | sed -n 's|^\(tools/bench/bench[-a-z0-9]*\): .*|\1|p' | sort -u)
ninja -C "$build" $targets >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "host: $(uname -srm); $(nproc) CPUs; pinned to CPU $cpu"
	grep -m1 'model name' /proc/cpuinfo || true
	echo "compiler: $(cc --version | head -n 1)"
	echo "git: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$src" diff --quiet -- libtwheel 2>/dev/null || echo ' (libtwheel has uncommitted changes)')"
} >"$out/env.txt"

set -- $quick --csv "$out/bench.csv" --md "$out/bench.md" "$@"
if [ $plot = 1 ]; then
	set -- "$@" --plot "$out/plots"
fi
pin=
if command -v taskset >/dev/null 2>&1; then
	pin="taskset -c $cpu"
else
	echo "run.sh: taskset not found, running unpinned" >&2
fi
echo "run.sh: $pin $build/tools/bench/bench $*" >&2
status=0
$pin "$build/tools/bench/bench" "$@" 2>"$out/bench.log" || status=$?
cat "$out/env.txt"
if [ $plot = 1 ]; then
	echo "results: $out/bench.md $out/bench.csv $out/plots/"
else
	echo "results: $out/bench.md $out/bench.csv"
fi
exit $status
