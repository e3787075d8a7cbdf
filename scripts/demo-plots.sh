#!/usr/bin/env bash
# scripts/demo-plots.sh - the pictures of a scripts/demo-peers.sh run
# (gnuplot, from scripts/deps.sh demo):
#
#   OUT/sessions-lateness-cdf.png   share of silent sessions closed within a
#                                   lateness, one curve per server and mode,
#                                   at scale N (as the generator saw them)
#   OUT/sessions-memory.png         the server's own memory per session
#                                   against sessions, one line per server
#
#   scripts/demo-plots.sh OUT N PEERS_DIR...
# Each PEERS_DIR is a demo-peers.sh --out directory (summary.tsv and the
# generators' CSV files); their rows are put together.
#
# Ctrl-C, SIGTERM or SIGHUP stops it at once (gnuplot with it), with the
# signal's status (130, 143, 129) and no line claiming the pictures.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ $# -ge 3 ] || { echo "usage: scripts/demo-plots.sh OUT N PEERS_DIR..." >&2; exit 2; }
out=$1 n=$2
shift 2
mkdir -p "$out"

# draw PEERS_DIR...: the worker of supervise (scripts/lib.sh), in a
# process group of its own that a signal stops whole (gnuplot, reading its
# script from a pipe, takes Ctrl-C as the end of one command and goes on:
# the script went on to say it had made the pictures); its data files in
# $STATE_DIR, removed either way
draw() {
  tmp=$STATE_DIR

  # CDF points "lateness_ms fraction" per run at scale n: both generators
  # write one close a line, its lateness as judged in the first column.
  plots=()
  for d in "$@"; do
    for f in "$d"/tcp-*-"$n".csv "$d"/udp-*-"$n".csv; do
      [ -f "$f" ] || continue
      name=$(basename "$f" .csv)
      grep -v '^#' "$f" | cut -d, -f1 | sort -g |
        awk '{ v[NR] = $1 } END { for (i = 1; i <= NR; i++) print v[i], i / NR }' >"$tmp/$name.dat"
      label=${name%-"$n"}; label=${label/-/ }
      plots+=("'$tmp/$name.dat' using 1:2 with lines lw 2 title '$label'")
    done
  done
  [ ${#plots[@]} -gt 0 ] || { echo "demo-plots: no lateness CSV at scale $n in $*" >&2; exit 1; }
  gnuplot <<EOF
set terminal pngcairo size 900,540 font ",11"
set output '$out/sessions-lateness-cdf.png'
set title "Silent sessions closed within a lateness, $n sessions (as the generator saw them)"
set xlabel 'lateness: close seen - (last datagram or connect + idle timeout), ms (log)'
set ylabel 'share of closes'
set logscale x
set xrange [0.1:*]
set yrange [0:1]
set key bottom right
set grid
plot $(IFS=,; echo "${plots[*]}")
EOF

  # memory per session: "mode server sessions own_B" from every summary.tsv
  for d; do [ ! -f "$d/summary.tsv" ] || cat "$d/summary.tsv"; done | awk -F'\t' '$1 != "mode" && $11 ~ /^[0-9]+$/ { print $1 "-" $2, $3, $11 }' |
    sort -k1,1 -k2,2n >"$tmp/mem.dat"
  lines=()
  for s in $(cut -d' ' -f1 "$tmp/mem.dat" | sort -u); do
    grep "^$s " "$tmp/mem.dat" | cut -d' ' -f2,3 >"$tmp/mem-$s.dat"
    lines+=("'$tmp/mem-$s.dat' using 1:2 with linespoints lw 2 pt 7 title '${s/-/ }'")
  done
  gnuplot <<EOF
set terminal pngcairo size 900,540 font ",11"
set output '$out/sessions-memory.png'
set title "The server's own memory per session (resident set growth / sessions)"
set xlabel 'sessions (log)'
set ylabel 'bytes per session (log)'
set logscale xy
set key top right
set grid
plot $(IFS=,; echo "${lines[*]}")
EOF
  echo "demo-plots: $out/sessions-lateness-cdf.png, $out/sessions-memory.png"
}

supervise draw "$@"
