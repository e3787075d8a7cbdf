#!/usr/bin/env bash
# tests/args/check_scripts_signals.sh SCRIPTS_DIR
#
# The scripts a user runs without changing a kernel setting, stopped by a
# signal at a chosen point: Ctrl-C (SIGINT to the process group), SIGTERM
# to the script alone (kill PID) and SIGHUP (the terminal gone). Each must
# exit with the signal's status (130, 143, 129) within 3 s, print no
# verdict after it (no table, no "passed"), and leave no program it started
# running and nothing in TMPDIR. Fake meson, ninja, dpkg-query,
# dpkg-buildpackage and gnuplot on PATH stand in for the builds and the
# plots (nothing is built or drawn); the fake that a case names
# sends the signal when it is called (the hook, as in check_demo_sh.sh),
# then waits as a long build would, catching the signal as ninja does
# (its commands stopped, exit 2), as meson test does (SIGINT ends the
# running test and it goes on with the next), as dpkg-buildpackage and
# gnuplot do (below).
#   - scripts/test.sh: a build or a meson test that caught Ctrl-C ended
#     its phase FAILED and the script went on with the next phases (a
#     whole run: the table, "FAILED: normal", exit 1); SIGTERM to
#     test.sh alone left the running meson test (and its tests) running.
#   - scripts/test-packages.sh and scripts/demo-plots.sh: below.
# Exit 0 pass, 1 fail.
set -u
scripts=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-signals-test.XXXXXX")
# shellcheck disable=SC2154 # p: the trap's own
trap 'for p in $(pgrep -f "$tmp/bin/"); do kill -KILL "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$tmp/bin"
ln -s "$(command -v sleep)" "$tmp/bin/hold" # a long step; found by its path
# hook CALL: the first line "PATTERN<tab>SIGNAL" of $tmp/signals whose
# glob PATTERN matches CALL (dropped once used) sends SIGNAL to
# $(cat $tmp/target): the script's pid, or its process group's (-PID);
# hook -m CALL: exit 0 if a line matches CALL, else 1 (nothing sent)
cat >"$tmp/bin/hook" <<'X'
#!/bin/bash
t=${0%/bin/*} lines=() sig=- match=0
[ "$1" = -m ] && { match=1; shift; }
[ -s "$t/signals" ] || exit 1
while IFS= read -r l; do
  # shellcheck disable=SC2053 # a glob
  if [ "$sig" = - ] && [[ $1 == ${l%%$'\t'*} ]]; then sig=${l#*$'\t'}; else lines+=("$l"); fi
done <"$t/signals"
[ "$sig" != - ] || exit 1
[ $match -eq 0 ] || exit 0
printf '%s\n' "${lines[@]}" | grep . >"$t/signals"
kill -s "$sig" -- "$(cat "$t/target")"
X
# dpkg-query: every package installed (scripts/deps.sh does nothing)
printf '#!/bin/sh\necho "install ok installed"\n' >"$tmp/bin/dpkg-query"
# ninja: 30 s when its call is hooked (as ninja 1.11: a signal stops its
# commands, exit 2), else at once
cat >"$tmp/bin/ninja" <<X
#!/bin/bash
"$tmp/bin/hook" -m "ninja \$*" || exit 0
"$tmp/bin/hold" 30 & c=\$!
trap 'kill \$c; echo "ninja: build stopped: interrupted by user."; exit 2' INT TERM HUP
"$tmp/bin/hook" "ninja \$*" &
wait \$c
X
# meson: setup makes the directory; test runs three tests of 10 s in
# sessions of their own when hooked (as meson test 1.0: SIGINT ends the
# running one and goes on, SIGTERM ends them all, exit 1), else none
cat >"$tmp/bin/meson" <<X
#!/bin/bash
case \$1 in
  setup) d=\$2; [ "\$d" = --reconfigure ] && d=\$3; mkdir -p "\$d" ;;
  test) d=\$3; mkdir -p "\$d/meson-logs"; : >"\$d/meson-logs/testlog.json"
        "$tmp/bin/hook" -m "meson \$*" || exit 0
        for i in 1 2 3; do
          setsid "$tmp/bin/hold" 10 & c=\$!
          trap 'kill \$c' INT; trap 'kill \$c; exit 1' TERM
          [ \$i = 1 ] && "$tmp/bin/hook" "meson \$*" &
          wait \$c; wait \$c
        done ;;
esac
exit 0
X
# dpkg-checkbuilddeps: all there; dpkg-buildpackage: 30 s when hooked (as
# dpkg-buildpackage 1.21: its debian/rules killed by SIGINT, it says so
# and exits 2), else fails at once
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/dpkg-checkbuilddeps"
cat >"$tmp/bin/dpkg-buildpackage" <<X
#!/bin/bash
"$tmp/bin/hook" -m "dpkg-buildpackage \$*" || exit 1
"$tmp/bin/hold" 30 & c=\$!
trap 'kill \$c; echo "dpkg-buildpackage: error: debian/rules build subprocess was killed by signal 2"; exit 2' INT
"$tmp/bin/hook" "dpkg-buildpackage \$*" &
wait \$c
X
# gnuplot: 30 s when hooked (as gnuplot 5.4 reading its script from a
# pipe: SIGINT ends the command it runs, and it goes on: exit 0)
cat >"$tmp/bin/gnuplot" <<X
#!/bin/bash
cat >/dev/null
"$tmp/bin/hook" -m "gnuplot" || exit 0
"$tmp/bin/hold" 30 & c=\$!
trap 'kill \$c' INT
"$tmp/bin/hook" "gnuplot" &
wait \$c; wait \$c; exit 0
X
chmod +x "$tmp/bin"/*

# stopped WHAT WANT_RC MODE CALL SIGNAL SCRIPT ARGS...: SCRIPT ARGS, SIGNAL
# sent to it (MODE alone) or its process group (MODE group) when the fake
# is called as CALL
stopped() {
  local what=$1 want=$2 mode=$3 call=$4 sig=$5 dpid rc i t0 t00 took
  shift 5
  t00=${EPOCHREALTIME//[!0-9]/}
  rm -rf "$tmp/td" "$tmp/root" && mkdir "$tmp/td"
  printf '%s\t%s\n' "$call" "$sig" >"$tmp/signals"
  : >"$tmp/out"
  # (SIGINT not ignored, as on a terminal; setsid: a process group of its own)
  PATH="$tmp/bin:$PATH" TMPDIR="$tmp/td" BUILD_ROOT="$tmp/root" PKG_OUT="$tmp/pkgout" env --default-signal=INT \
    setsid "$@" >"$tmp/out" 2>&1 &
  dpid=$!
  if [ "$mode" = group ]; then echo "-$dpid" >"$tmp/target"; else echo "$dpid" >"$tmp/target"; fi
  for ((i = 0; i < 500; i++)); do [ -s "$tmp/signals" ] || break; sleep 0.02; done
  t0=${EPOCHREALTIME//[!0-9]/}
  while kill -0 "$dpid" 2>/dev/null && [ $(( ${EPOCHREALTIME//[!0-9]/} - t0 )) -lt 3000000 ]; do
    sleep 0.02
  done
  took=$(( (${EPOCHREALTIME//[!0-9]/} - t0) / 1000 ))
  if kill -0 "$dpid" 2>/dev/null; then
    fail "$what: still running $took ms after the signal"
    kill -KILL -- -"$dpid" 2>/dev/null
  fi
  wait "$dpid"
  rc=$?
  local ok=1
  [ -s "$tmp/signals" ] && { fail "$what: the script never called $call"; ok=0; }
  [ $rc -eq "$want" ] || { fail "$what: exit $rc, want $want"; ok=0; }
  if grep -Eq '^ +total +[0-9]+$|passed|FAILED|png' "$tmp/out"; then
    fail "$what: a verdict after the signal: $(grep -Em1 '^ +total|passed|FAILED|png' "$tmp/out")"
    ok=0
  fi
  if pgrep -f "$tmp/bin/" >/dev/null; then
    fail "$what: left running: $(pgrep -af "$tmp/bin/" | sed "s|$tmp|T|g" | paste -sd ';')"
    ok=0
  fi
  [ -z "$(ls -A "$tmp/td")" ] || { fail "$what: left in TMPDIR: $(ls -A "$tmp/td")"; ok=0; }
  if [ $ok -eq 1 ]; then
    echo "ok: $what: exit $rc, $took ms after the signal, $(( (${EPOCHREALTIME//[!0-9]/} - t00) / 1000 )) ms in all"
  else
    sed 's/^/  out: /' "$tmp/out" | tail -15
  fi
  for i in $(pgrep -f "$tmp/bin/"); do kill -KILL "$i" 2>/dev/null; done # (the next case starts clean)
}

t=$scripts/test.sh
stopped "test.sh --quick, Ctrl-C in the normal build's ninja" 130 group "ninja -C */normal" INT \
  "$t" --quick
stopped "test.sh --quick, Ctrl-C in the normal build's meson test" 130 group "meson test -C */normal *" INT \
  "$t" --quick
stopped "test.sh --quick, SIGTERM to test.sh alone in meson test" 143 alone "meson test -C */normal *" TERM \
  "$t" --quick
stopped "test.sh --quick, SIGHUP in the normal build's ninja" 129 group "ninja -C */normal" HUP \
  "$t" --quick
# the whole run: the background chain (its ASan compile) stopped with it
stopped "test.sh, SIGTERM to test.sh alone in the background ASan compile" 143 alone "ninja -C */asan" \
  TERM "$t"

# scripts/test-packages.sh: dpkg-buildpackage that caught Ctrl-C ended its
# phase FAILED (exit 1); SIGTERM to the script alone left it building in
# a copy of the tree removed under it. (It copies the tree with git.)
t=$scripts/test-packages.sh
if git -C "$scripts" rev-parse --git-dir >/dev/null 2>&1; then
  stopped "test-packages.sh, Ctrl-C in dpkg-buildpackage" 130 group "dpkg-buildpackage *" INT "$t"
  stopped "test-packages.sh, SIGTERM to it alone in dpkg-buildpackage" 143 alone "dpkg-buildpackage *" \
    TERM "$t"
else
  echo "note: $scripts is not in a git work tree: test-packages.sh not run"
fi

# scripts/demo-plots.sh: gnuplot that caught Ctrl-C went on, and so did
# the script, to its line naming the pictures (exit 0); SIGTERM to the
# script alone left gnuplot running.
mkdir -p "$tmp/peers"
printf '# lateness_ms,...\n1.5,x\n2.5,y\n' >"$tmp/peers/tcp-c-100.csv"
printf 'mode\tserver\tsessions\t3\t4\t5\t6\t7\t8\t9\town_B\ntcp\tc\t100\t0\t0\t0\t0\t0\t0\t0\t512\n' \
  >"$tmp/peers/summary.tsv"
t=$scripts/demo-plots.sh
stopped "demo-plots.sh, Ctrl-C in gnuplot" 130 group gnuplot INT "$t" "$tmp/plots" 100 "$tmp/peers"
stopped "demo-plots.sh, SIGTERM to it alone in gnuplot" 143 alone gnuplot TERM \
  "$t" "$tmp/plots" 100 "$tmp/peers"

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS: the scripts stopped by signals"
