#!/usr/bin/env bash
# tests/demo/demo_sh_verdict.sh MODE DEMO_SH IDLE_LOAD IDLE_SERVER_C UDP_LOAD UDP_SERVER
#
# scripts/demo.sh's verdict, run on this build's programs (a build
# directory of links to them, a fake ninja that builds nothing, --no-deps):
#
#   labels  an INVALID run (the generator's --debug-stall-ms stops it longer
#           than it may fall behind) is retried by itself, said, labelled
#           INVALID in the phase lines and the table (never FAILED), its
#           summary shown once a try, and after three tries the demo ends
#           INVALID (exit 3) with one line saying what to do; a run with early
#           closes (the server's timeout shorter than the generator's) is a
#           FAIL even when the generator fell behind, and is not retried; the
#           same for --udp, and a --udp run INVALID three times says the
#           cause udp-load named at each retry.
#   busy    with both cores loaded (stress-ng --cpu 4), the demo still ends in
#           PASS within its three tries, in well under a minute (2,000
#           connections): the server is correct, so a FAIL would be the
#           machine's load taken for the server's fault; the last line says
#           the load the run was measured under.
#   busy-udp  the same for --udp (2,000 sessions), whose kernel settings
#           raised are put back (and said) before that last line.
# Exit 0 pass, 1 fail, 77 skip (demo.sh exits 77: the kernel refuses
# io_uring or what the demo needs, as before Linux 5.19).
set -u
mode=$1 demo=$2
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-demo-verdict.XXXXXX")
spid=''
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/bd/demo"
ln -s "$(abs "$3")" "$tmp/bd/demo/idle-load"
ln -s "$(abs "$4")" "$tmp/bd/demo/idle-server-c"
ln -s "$(abs "$5")" "$tmp/bd/demo/udp-load"
ln -s "$(abs "$6")" "$tmp/bd/demo/udp-session-server"
cat >"$tmp/bin/ninja" <<'EOF'
#!/bin/sh
case "$*" in
  *"-t targets"*) printf 'demo/idle-load: phony\ndemo/idle-server-c: phony\n' ;;
esac
exit 0
EOF
chmod +x "$tmp/bin/ninja"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# rundemo ARGS...: the demo's output in $tmp/out, its status in $rc, its
# seconds in $secs; on a port below the kernel's ephemeral ones (another
# one if that is taken)
rundemo() {
  local t0=$SECONDS port
  for _ in 1 2 3; do
    port=$(( 20000 + RANDOM % 12000 ))
    PATH="$tmp/bin:$PATH" timeout 170 "$demo" --no-deps --build-dir "$tmp/bd" --port "$port" "$@" \
      >"$tmp/out" 2>&1
    rc=$?
    grep -q 'Address already in use' "$tmp/out" || break
  done
  secs=$((SECONDS - t0))
  if [ $rc -eq 77 ]; then # the kernel refuses io_uring, or what the demo needs
    echo "SKIP: demo.sh exits 77 here:"
    show 5
    exit 77
  fi
}
show() { sed 's/^/  | /' "$tmp/out" | grep -v '^  |     ' | tail -${1:-25}; }
# runs: the run phases' results (PASS, FAIL, INVALID; FAILED: another
# exit status), one a line
runs() { sed -n 's/^\[[0-9]*\] run: .* \.\.\. \([A-Za-z]*\) (.*/\1/p' "$tmp/out"; }

# behind_causes GAP_RE: a regex of the causes udp-load names for a run
# that fell behind (say_behind()), in its order, its sockets left unread
# (GAP_RE ms over a 1 ms --tolerance-ms: what the --udp cases force)
# among them; the others come with a stall under load: a chatty datagram
# a quarter timeout behind (150 ms in case 3), drops, a STATS reply missing
behind_causes() {
  printf '%s' '(a chatty datagram went out [0-9.]+ ms behind its schedule \(a quarter timeout: [0-9.]+\); )?' \
    "udp-load left its sockets unread $1 ms \\(--tolerance-ms 1\\)" \
    '(; [0-9]+ datagrams dropped \(the drops line\))?' \
    '(; no STATS reply from the server (before the run|once all sessions were open))?'
}

case $mode in
labels)
  # 1. INVALID three times: retried, labelled, ended with one line.
  rundemo --conns 100 --idle-ms 2000 --rate 0 -- --debug-stall-ms 1200
  ok=1
  [ $rc -eq 3 ] || { fail "forced INVALID: exit $rc, want 3"; ok=0; }
  [ "$(runs | paste -sd ' ')" = "INVALID INVALID INVALID" ] ||
    { fail "forced INVALID: the run phases said '$(runs | paste -sd ' ')', want INVALID three times"; ok=0; }
  ! grep -q 'FAILED' "$tmp/out" || { fail "forced INVALID: FAILED in the output"; ok=0; }
  [ "$(grep -c '^\[[0-9]*\] *run: .*  *INVALID$' "$tmp/out")" = 3 ] ||
    { fail "forced INVALID: the table does not say INVALID for each of the 3 runs"; ok=0; }
  [ "$(grep -c 'idle_conns summary' "$tmp/out")" = 3 ] ||
    { fail "forced INVALID: $(grep -c 'idle_conns summary' "$tmp/out") summaries for 3 runs"; ok=0; }
  [ "$(grep -c '^demo: INVALID: the generator fell behind.*try [23] of 3' "$tmp/out")" = 2 ] ||
    { fail "forced INVALID: the two retries are not said"; ok=0; }
  [ "$(tail -1 "$tmp/out" | grep -c '^demo: INVALID after 3 tries: .*; run it when')" = 1 ] ||
    { fail "forced INVALID: the last line does not say what to do"; ok=0; }
  ! grep -q '^ *INVALID: each of these must be 0' "$tmp/out" ||
    { fail "forced INVALID: 'INVALID: each of these must be 0' above figures that are 0"; ok=0; }
  [ "$(grep -c '^demo: INVALID after 3 tries' "$tmp/out")" = 1 ] ||
    { fail "forced INVALID: the closing line is not there once"; ok=0; }
  [ $ok -eq 1 ] && echo "ok: a forced INVALID run: retried twice, labelled INVALID, exit 3 ($secs s)" || show 40

  # 2. Early closes in a run that fell behind: FAIL, once, and said last.
  # (the server's timeout 800 ms, the generator's 1600 ms)
  rundemo --conns 100 --idle-ms 800 --rate 0 -- --idle-ms 1600 --debug-stall-ms 400
  ok=1
  [ $rc -eq 1 ] || { fail "early closes, fell behind: exit $rc, want 1"; ok=0; }
  [ "$(runs | paste -sd ' ')" = "FAIL" ] ||
    { fail "early closes, fell behind: the run phases said '$(runs | paste -sd ' ')', want FAIL once"; ok=0; }
  grep -q 'RESULT .* early=[1-9]' "$tmp/out" || { fail "early closes, fell behind: no early close counted"; ok=0; }
  grep -q 'RESULT .* stall_max_us=[0-9]\{6\}' "$tmp/out" ||
    { fail "early closes, fell behind: the generator did not stall 100 ms or more"; ok=0; }
  grep -q 'wrong whatever its lag' "$tmp/out" || { fail "early closes, fell behind: not said why it is a FAIL"; ok=0; }
  tail -1 "$tmp/out" | grep -q '^demo: FAIL' || { fail "early closes, fell behind: the last line is not FAIL"; ok=0; }
  [ $ok -eq 1 ] && echo "ok: early closes in a run that fell behind: FAIL, not retried ($secs s)" || show 40

  # 3. --udp: the same with early closes in a run that fell behind (its
  # sockets left unread longer than a 1 ms --tolerance-ms).
  rundemo --udp --sessions 400 --idle-ms 300 --no-pin -- --idle-ms 600 --tolerance-ms 1
  ok=1
  [ $rc -eq 1 ] || { fail "--udp, early closes, fell behind: exit $rc, want 1"; ok=0; }
  [ "$(runs | paste -sd ' ')" = "FAIL" ] ||
    { fail "--udp, early closes: the run phases said '$(runs | paste -sd ' ')', want FAIL once"; ok=0; }
  grep -q 'RESULT .* early=[1-9].* behind=1' "$tmp/out" ||
    { fail "--udp: no early close counted in a run that fell behind"; ok=0; }
  # its figure, as the RESULT line has it
  gap=$(sed -n 's/^ *RESULT .* stall_max_us=\([0-9]*\) .*/\1/p' "$tmp/out" | awk '{ printf "%.1f", $1 / 1000 }')
  grep -Eq "^ *The run fell behind \($(behind_causes "${gap/./\\.}")\),\$" "$tmp/out" ||
    { fail "--udp: the FAIL of a run that fell behind does not say how it fell behind"; ok=0; }
  [ $ok -eq 1 ] && echo "ok: --udp, early closes in a run that fell behind: FAIL, not retried ($secs s)" || show 40

  # 4. --udp INVALID three times (its sockets unread longer than a 1 ms
  # --tolerance-ms): each retry says the cause udp-load named, not "the
  # generator fell behind" (which it said whatever the cause, the
  # server's drops too).
  rundemo --udp --sessions 100 --idle-ms 200 --rate 50000 --no-pin -- --tolerance-ms 1
  ok=1
  [ $rc -eq 3 ] || { fail "--udp, forced INVALID: exit $rc, want 3"; ok=0; }
  [ "$(runs | paste -sd ' ')" = "INVALID INVALID INVALID" ] ||
    { fail "--udp, forced INVALID: the run phases said '$(runs | paste -sd ' ')', want INVALID three times"; ok=0; }
  [ "$(grep -Ec "^demo: INVALID: $(behind_causes '[0-9.]+'), so this run says nothing of the server; try [23] of 3" "$tmp/out")" = 2 ] ||
    { fail "--udp, forced INVALID: the two retries do not say why the run was invalid"; ok=0; }
  [ $ok -eq 1 ] && echo "ok: --udp, a forced INVALID run: each retry says why ($secs s)" || show 40
  ;;
busy|busy-udp)
  command -v stress-ng >/dev/null || { echo "FAIL: no stress-ng (scripts/deps.sh test installs it)"; exit 1; }
  stress-ng --cpu 4 --timeout 150s >/dev/null 2>&1 &
  spid=$!
  # the load on: stress-ng's 4 workers forked (each spins from its start;
  # 0.2-0.5 s here, 10 s at most), found by their parent in /proc (a
  # minimal Debian has no procps)
  for _ in $(seq 200); do
    n=0
    for f in /proc/[0-9]*/stat; do
      { read -r s <"$f"; } 2>/dev/null || continue
      read -r _ ppid _ <<<"${s##*) }" # after the name: state, parent
      [ "$ppid" = "$spid" ] && n=$((n + 1))
    done
    [ $n -ge 4 ] && break
    sleep 0.05
  done
  [ $n -ge 4 ] || { fail "stress-ng started $n of its 4 workers in 10 s"; exit 1; }
  if [ "$mode" = busy ]; then rundemo --conns 2000; else rundemo --udp --sessions 2000; fi
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
  spid=''
  tries=$(runs | wc -l)
  # the demo's last line (a --udp run said the sysctls it put back after it)
  last=$(tail -1 "$tmp/out")
  echo "$mode: $(runs | paste -sd ' ') in $secs s, exit $rc"
  if [ $rc -eq 3 ]; then
    fail "with stress-ng --cpu 4: INVALID after $tries tries"; show 40
  elif [ $rc -eq 1 ]; then
    fail "with stress-ng --cpu 4: FAIL, of a correct server"; show 40
  elif [ $rc -ne 0 ]; then
    fail "with stress-ng --cpu 4: exit $rc"; show 40
  elif [ "$tries" -gt 3 ] || [ "$tries" -lt 1 ]; then
    fail "with stress-ng --cpu 4: $tries runs"; show 40
  elif ! grep -q 'measured with the CPUs [0-9]*% busy, [0-9.]* of them by other' <<<"$last"; then
    fail "with stress-ng --cpu 4: the last line does not say the load it was measured under"; show 5
  elif [ "$(runs | tail -1)" != "$( ((rc)) && echo FAIL || echo PASS)" ] ||
       ! grep -q "^demo: $( ((rc)) && echo FAIL || echo PASS)" <<<"$last"; then
    fail "with stress-ng --cpu 4: exit $rc, but the last run says $(runs | tail -1)"; show 40
  else
    echo "ok: with both cores loaded, a verdict ($(runs | tail -1)) in $tries of 3 tries, $secs s"
  fi
  ;;
*) echo "demo_sh_verdict.sh: labels, busy or busy-udp"; exit 1 ;;
esac
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS: demo.sh's verdict ($mode)"
