#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/bench/run.sh - build the benchmarks in release mode in a temporary
# directory and run all of them pinned to one CPU: bench (virtual time),
# every bench-rt-* executable (real time, Netty's HashedWheelTimer with the
# first), writing Markdown and CSV (and PNG charts with --plot) into OUTDIR.
#
# usage: tools/bench/run.sh [--plot] [--quick] [OUTDIR] [-- ARGS...]
#   OUTDIR     default /tmp/twheel-bench
#   --plot     also draw a chart of each CSV's ns/op medians into OUTDIR (gnuplot)
#   --quick    scaled-down sizes (a smoke run of about a minute)
#   ARGS       passed to every driver, e.g. -- --reps 9
# environment:
#   BENCH_CPU    the CPU to pin to with taskset (default 1)
#   BENCH_BUILD  build directory to (re)use instead of a fresh temporary one
#
# Writes OUTDIR/bench.{md,csv,log}, OUTDIR/rt-NAME.{md,csv,log} per
# real-time executable and OUTDIR/env.txt (machine, compiler, git revision).
# Exit status 1 if any check failed.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
out=/tmp/twheel-bench plot=0 quick=
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
"$src/scripts/deps.sh" bench # the peers' libraries, Netty + a JDK, gnuplot
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BENCH_BUILD:-}
if [ -z "$build" ]; then
	build=$(mktemp -d /tmp/twheel-bench-build.XXXXXX)
	trap 'rm -rf "$build"' EXIT
fi
[ -f "$build/build.ninja" ] || meson setup "$build" "$src" -Dbuildtype=release -Dtools=true \
	-Dtests=false -Dexamples=false >"$out/meson-setup.log" 2>&1 || { cat "$out/meson-setup.log" >&2; exit 1; }
ninja -C "$build" >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "host: $(uname -srm); $(nproc) CPUs; pinned to CPU $cpu; load $(cut -d' ' -f1-3 /proc/loadavg)"
	grep -m1 'model name' /proc/cpuinfo || true
	echo "compiler: $(cc --version | head -n 1)"
	echo "git: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$src" diff --quiet -- libtwheel tools 2>/dev/null || echo ' (uncommitted changes)')"
} >"$out/env.txt"
pin=
command -v taskset >/dev/null 2>&1 && pin="taskset -c $cpu" || echo "run.sh: no taskset, unpinned" >&2
status=0
run() { # NAME EXE ARGS...: one driver, its Markdown, CSV and log
	name=$1 exe=$2
	shift 2
	echo "run.sh: $pin $exe $*" >&2
	$pin "$exe" $quick --csv "$out/$name.csv" --md "$out/$name.md" "$@" >/dev/null 2>"$out/$name.log" || status=1
}
run bench "$build/tools/bench/bench" "$@"
netty="--netty $src/tools/bench"
for set in uring epoll uv ev event asio; do
	exe=$build/tools/bench/bench-rt-$set
	[ -f "$exe" ] && [ -x "$exe" ] || continue
	run "rt-$set" "$exe" $netty "$@"
	netty=
done
if [ $plot = 1 ] && command -v gnuplot >/dev/null 2>&1; then
	for csv in "$out"/*.csv; do # the ns/op medians at the largest N: one bar chart per file
		png=${csv%.csv}.png
		awk -F, '$5 == "ns/op" && $13 == "ok" && ($1 == "main" || $1 == "rt") {
			print $2 "/" $3, $6, $7, $8 }' "$csv" >"${csv%.csv}.dat"
		[ -s "${csv%.csv}.dat" ] || continue
		gnuplot -e "set terminal pngcairo size 1100,560; set output '$png'; set style fill solid 0.7;
			set boxwidth 0.7; set logscale y; set xtics rotate by -40 noenhanced; set key off;
			set title 'ns per operation, median (bars: min-max): $(basename "$csv")' noenhanced;
			plot '${csv%.csv}.dat' u 0:2:xtic(1) w boxes, '' u 0:2:3:4 w yerrorbars pt 0" &&
			echo "PLOT $png" || echo "SKIP plot $png: gnuplot failed"
	done
fi
cat "$out/env.txt"
echo "results: $out/*.md $out/*.csv"
exit $status
