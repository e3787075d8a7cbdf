#!/usr/bin/env bash
# tests/args/check_scripts_signals.sh SCRIPTS_DIR
#
# The scripts a user runs without changing a kernel setting, stopped by a
# signal at a chosen point: Ctrl-C (SIGINT to the process group), SIGTERM
# to the script alone (kill PID) and SIGHUP (the terminal gone). Each must
# exit with the signal's status (130, 143, 129) within 3 s, print no
# verdict after it (no table, no "passed"), and leave no program it started
# running and nothing in TMPDIR. Fake meson, ninja and dpkg-query on PATH
# stand in for the builds (nothing is built); the fake that a case names
# sends the signal when it is called (the hook, as in check_demo_sh.sh),
# then waits as a long build would, catching the signal as ninja does
# (its commands stopped, exit 2) or as meson test does (SIGINT ends the
# running test and it goes on with the next).
#   - scripts/test.sh: a build or a meson test that caught Ctrl-C ended
#     its phase FAILED and the script went on with the next phases (a
#     whole run: the table, "FAILED: normal", exit 1); SIGTERM to
#     test.sh alone left the running meson test (and its tests) running.
# Exit 0 pass, 1 fail.
set -u
scripts=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-signals-test.XXXXXX")
# shellcheck disable=SC2154 # p: the trap's own
trap 'for p in $(pgrep -f "^$tmp/"); do kill -KILL "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
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
chmod +x "$tmp/bin"/*

# stopped WHAT WANT_RC MODE CALL SIGNAL SCRIPT ARGS...: SCRIPT ARGS, SIGNAL
# sent to it (MODE alone) or its process group (MODE group) when the fake
# is called as CALL
stopped() {
  local what=$1 want=$2 mode=$3 call=$4 sig=$5 dpid rc i t0 took
  shift 5
  rm -rf "$tmp/td" "$tmp/root" && mkdir "$tmp/td"
  printf '%s\t%s\n' "$call" "$sig" >"$tmp/signals"
  : >"$tmp/out"
  # (SIGINT not ignored, as on a terminal; setsid: a process group of its own)
  PATH="$tmp/bin:$PATH" TMPDIR="$tmp/td" BUILD_ROOT="$tmp/root" env --default-signal=INT \
    setsid "$@" >"$tmp/out" 2>&1 &
  dpid=$!
  if [ "$mode" = group ]; then echo "-$dpid" >"$tmp/target"; else echo "$dpid" >"$tmp/target"; fi
  for ((i = 0; i < 200; i++)); do [ -s "$tmp/signals" ] || break; sleep 0.05; done
  t0=${EPOCHREALTIME//[!0-9]/}
  while kill -0 "$dpid" 2>/dev/null && [ $(( ${EPOCHREALTIME//[!0-9]/} - t0 )) -lt 3000000 ]; do
    sleep 0.05
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
  if grep -Eq '^ +total +[0-9]+$|passed|^FAILED' "$tmp/out"; then
    fail "$what: a verdict after the signal: $(grep -Em1 '^ +total|passed|^FAILED' "$tmp/out")"
    ok=0
  fi
  sleep 0.1 # (what the clean-up stopped: reaped by init meanwhile)
  if pgrep -f "^$tmp/" >/dev/null; then
    fail "$what: left running: $(pgrep -af "^$tmp/" | sed "s|$tmp|T|g" | paste -sd ';')"
    ok=0
  fi
  [ -z "$(ls -A "$tmp/td")" ] || { fail "$what: left in TMPDIR: $(ls -A "$tmp/td")"; ok=0; }
  [ $ok -eq 1 ] && echo "ok: $what: exit $rc, $took ms" || sed 's/^/  out: /' "$tmp/out" | tail -15
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

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS: the scripts stopped by signals"
