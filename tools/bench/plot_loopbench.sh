#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tools/bench/plot_loopbench.sh - chart the CSV written by tools/loopbench
# (the real-time workloads of docs/bench.md) with gnuplot.
#
# usage: plot_loopbench.sh FILE.csv OUTDIR
#
# loopbench's CSV has the header "case,median,min,max,reps" and one row per
# workload/loop/metric. Each workload becomes one PNG,
# OUTDIR/loopbench_WORKLOAD.png, with one panel per metric and one bar per
# loop (median, with the min-max range as an error bar). A CSV of any other
# shape is drawn as one bar chart of its numeric columns.
set -eu
csv=$1
out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
header=$(head -n 1 "$csv")

if [ "$header" = "case,median,min,max,reps" ]; then
	dat="$out/loopbench_dat"
	rm -rf "$dat"
	mkdir -p "$dat"
	# one file per workload/metric: "loop median min max"; list of workloads
	awk -F, -v d="$dat" 'NR > 1 && NF >= 4 {
		n = split($1, c, "/"); if (n < 3) next
		f = d "/" c[1] "__" c[3] ".dat"
		print c[2], $2, $3, $4 >> f
		if (!(c[1] in seen)) { seen[c[1]] = 1; print c[1] >> (d "/workloads") }
		if (!((c[1], c[3]) in m)) { m[c[1], c[3]] = 1; print c[3] >> (d "/" c[1] ".metrics") }
	}' "$csv"
	[ -f "$dat/workloads" ] || { echo "SKIP plot loopbench: no rows in $csv"; exit 1; }
	status=0
	while read -r wl; do
		nm=$(wc -l <"$dat/$wl.metrics")
		gp="$out/loopbench_$wl.gp"
		{
			echo "set terminal pngcairo size $((330 * nm + 120)),480 font 'DejaVu Sans,10'"
			echo "set output '$out/loopbench_$wl.png'"
			echo "set style fill solid 0.7 border -1"
			echo "set boxwidth 0.6"
			echo "set grid ytics"
			echo "set xtics rotate by -30 noenhanced"
			echo "set key off"
			echo "set multiplot layout 1,$nm title \"tools/loopbench: $wl (real time; median, bars min-max; from $(basename "$csv"))\" noenhanced"
			while read -r metric; do
				echo "set title '$metric' noenhanced"
				echo "set xrange [-0.7:*]"
				echo "plot '$dat/${wl}__$metric.dat' using 0:2:xtic(1) with boxes lc rgb '#5e81ac', '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0"
			done <"$dat/$wl.metrics"
			echo "unset multiplot"
		} >"$gp"
		if gnuplot "$gp" 2>"$out/loopbench_$wl.err"; then
			echo "PLOT $out/loopbench_$wl.png"
			rm -f "$out/loopbench_$wl.err"
		else
			echo "SKIP plot loopbench $wl: gnuplot failed (see $out/loopbench_$wl.err)"
			status=1
		fi
	done <"$dat/workloads"
	exit $status
fi

# any other CSV: first column labels the rows, every other column is a series
name=$(basename "$csv" .csv)
ncol=$(echo "$header" | awk -F, '{print NF}')
if [ "$ncol" -lt 2 ]; then
	echo "SKIP plot loopbench: $csv has fewer than two columns"
	exit 1
fi
cat >"$out/loopbench_$name.gp" <<GP
set terminal pngcairo size 1000,560 font 'DejaVu Sans,11'
set output '$out/loopbench_$name.png'
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
if gnuplot "$out/loopbench_$name.gp" 2>"$out/loopbench_$name.err"; then
	echo "PLOT $out/loopbench_$name.png"
else
	echo "SKIP plot loopbench: gnuplot could not chart $csv (see $out/loopbench_$name.err)"
	exit 1
fi
