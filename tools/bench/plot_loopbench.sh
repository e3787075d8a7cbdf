#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/bench/plot_loopbench.sh - chart a CSV written by tools/loopbench (the
# real-time workloads of shared/BENCHMARKS.md) with gnuplot.
#
# usage: plot_loopbench.sh FILE.csv OUTDIR
# The CSV's first row names the columns and its first column labels each row;
# every numeric column becomes one bar series (log y), and a histogram
# (columns named like bucket/lateness and count) becomes a bar chart of counts.
set -eu
csv=$1
out=$2
name=$(basename "$csv" .csv)
mkdir -p "$out"
header=$(head -n 1 "$csv")
ncol=$(echo "$header" | awk -F, '{print NF}')
if [ "$ncol" -lt 2 ]; then
	echo "SKIP plot loopbench: $csv has fewer than two columns"
	exit 1
fi
cat >"$out/loopbench_$name.gp" <<GP
set terminal pngcairo size 1000,560 font 'DejaVu Sans,11'
set output 'loopbench_$name.png'
set datafile separator ','
set title "tools/loopbench: $name (real time, from $(basename "$csv"))" noenhanced
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30 noenhanced
set key noenhanced top left
set grid ytics
plot for [i=2:$ncol] '$csv' using i:xtic(1) title columnheader(i)
GP
if (cd "$out" && gnuplot "loopbench_$name.gp" 2>"loopbench_$name.err"); then
	echo "PLOT $out/loopbench_$name.png"
else
	echo "SKIP plot loopbench: gnuplot could not chart $csv (see $out/loopbench_$name.err)"
	exit 1
fi
