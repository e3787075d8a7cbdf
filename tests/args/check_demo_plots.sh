#!/usr/bin/env bash
# tests/args/check_demo_plots.sh DEMO_PLOTS_SH
#
# scripts/demo-plots.sh OUT N DIR1 DIR2 puts the rows of both directories
# together (fake gnuplot on PATH, keeping the scripts it is given): the
# memory picture has a line for each server, and the script ends well.
# It read "DIR1 DIR2/summary.tsv" (cat "$@"/summary.tsv): the first, a
# directory, failed, and under pipefail the script ended there, exit 1,
# without a word, after the first picture. Exit 0 pass, 1 fail.
set -u
plots=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-plots-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/a" "$tmp/b"
# gnuplot: its script in $tmp/gp.N, and each data file it names in $tmp/data
cat >"$tmp/bin/gnuplot" <<X
#!/bin/bash
n=\$(ls "$tmp" | grep -c '^gp\.')
cat >"$tmp/gp.\$n"
for f in \$(grep -o "'[^']*\.dat'" "$tmp/gp.\$n" | tr -d "'"); do cat "\$f"; done >>"$tmp/data"
X
chmod +x "$tmp/bin/gnuplot"
head='mode\tserver\tsessions\theld\tp50\tp99\tmax\tearly\tnever\tcpu\town_B'
# DIR SERVER OWN_B: a run of SERVER at 100 sessions, OWN_B bytes a session
run() {
  printf '# lateness_ms,...\n1.5,x\n2.5,y\n' >"$tmp/$1/tcp-$2-100.csv"
  printf "$head\\ntcp\\t%s\\t100\\t0\\t0\\t0\\t0\\t0\\t0\\t0\\t%s\\n" "$2" "$3" >"$tmp/$1/summary.tsv"
}
run a c 5000
run b cpp 6000
PATH="$tmp/bin:$PATH" TMPDIR="$tmp" "$plots" "$tmp/out" 100 "$tmp/a" "$tmp/b" >"$tmp/stdout" 2>&1
rc=$?
fails=0
[ $rc -eq 0 ] || { echo "FAIL: exit $rc, want 0"; fails=1; }
grep -q "^demo-plots: $tmp/out/sessions-lateness-cdf.png, $tmp/out/sessions-memory.png$" "$tmp/stdout" ||
  { echo "FAIL: no line naming the pictures"; fails=1; }
for t in "title 'tcp c'" "title 'tcp cpp'"; do
  grep -q "$t" "$tmp/gp.1" 2>/dev/null || { echo "FAIL: the memory picture has no line $t"; fails=1; }
done
# the rows: 100 sessions, 5000 bytes (c) and 100, 6000 (cpp)
for row in '100 5000' '100 6000'; do
  grep -qx "$row" "$tmp/data" || { echo "FAIL: the memory data lack the row $row"; fails=1; }
done
[ $fails -eq 0 ] || { sed 's/^/  out: /' "$tmp/stdout"; exit 1; }
echo "PASS: demo-plots.sh puts the rows of two directories together"
