#!/usr/bin/env bash
# tests/demo/run_demo_test.sh - run an idle-timeout server and the load
# generator against it at a small scale and assert on the generator's
# summary and on the server's own accounting.
#
# usage: run_demo_test.sh SERVER LOAD NAME [--server ARGS... --] [LOAD ARGS...]
#   NAME is only used in messages. Server arguments go between --server and
#   --; the rest go to the load generator. --port is filled in.
#
# Asserts: the generator passes (no connection closed early or wrongly,
# every silent one closed, no connect failed, the server answered STATS with
# no connection and no pending timer left, the summary and RESULT line say
# the machine's load over the run); then SIGTERM makes the server
# exit 0 after printing a final STATS line with conns=0 timers=0 on every
# worker. Extra checks by environment: EXPECT_LOG=REGEX must match the
# server's output; EXPECT_STAT=key>N must hold for the sum over workers;
# EXPECT_RESULT=key>=X or key<=X (a number, decimals allowed; several,
# separated by spaces, must each hold) for the generator's RESULT line; LOAD_NOFILE=N runs the generator under
# a hard RLIMIT_NOFILE of N (prlimit, and setpriv as root).
#
# The plot (--plot, always asked for) tells the truth: in a passing run
# no value it draws (its csv, every column) is below zero, since below
# zero means closed early, which fails the run; an INVALID run's plot says
# INVALID in its title.
# Exit 0 pass, 1 fail, 77 skip (io_uring refused by the kernel, or the
# server's --bind address, e.g. ::1, does not exist on this machine).
#
# A run in which the generator itself fell behind (it says INVALID and
# exits 3: its own lag beyond the tolerance, or "starved" connections, a
# whole timeout without sending, on an overloaded machine) measures nothing
# about the server; it is run again, up to 3 times, and fails if it never
# gets a valid run. EXPECT_INVALID=1 turns that around: the generator must
# declare the run INVALID with exit 3 (a forced stall), the server must
# still end clean; EXPECT_FAIL=1 too: the generator must FAIL the run
# (exit 1), and the server still end clean.
set -u
if [ -z "${TWHEEL_DEMO_ATTEMPT-}" ]; then
  for attempt in 1 2 3; do
    TWHEEL_DEMO_ATTEMPT=$attempt "$0" "$@"
    rc=$?
    [ $rc -ne 3 ] && exit $rc
    echo "attempt $attempt was not a valid run (the generator fell behind); again"
  done
  echo "FAIL [$3]: no valid run in 3 attempts (machine overloaded?)"
  exit 1
fi
server=$1 load=$2 name=$3
shift 3
sargs=()
if [ "${1-}" = --server ]; then
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
  [ "${1-}" = -- ] && shift
fi
largs=("$@")

# shellcheck source-path=SCRIPTDIR source=server.sh
. "$(dirname "$0")/server.sh"
server_start "$name" "$server" "${sargs[@]}"

# LOAD_NOFILE=N: the generator under a hard RLIMIT_NOFILE of N, which
# (without CAP_SYS_RESOURCE, dropped as root) it cannot raise
lwrap=()
if [ -n "${LOAD_NOFILE-}" ]; then
  lwrap=(prlimit "--nofile=$LOAD_NOFILE:$LOAD_NOFILE")
  [ "$(id -u)" -eq 0 ] && lwrap+=(setpriv --bounding-set -sys_resource --inh-caps -sys_resource)
fi
"${lwrap[@]}" "$load" --port "$port" --quiet --plot "$tmp/plot" "${largs[@]}" >"$tmp/load.log" 2>&1
lrc=$?
cat "$tmp/load.log"
[ $lrc -eq 77 ] && { echo "SKIP [$name]: io_uring refused"; exit 77; }
result=$(grep '^RESULT ' "$tmp/load.log") || fail "no RESULT line from the generator (exit $lrc)"
get() { sed -n "s/.* $1=\([-0-9.]*\).*/\1/p" <<<"$result"; }
if [ -n "${EXPECT_FAIL-}" ]; then
  [ $lrc -eq 3 ] && { echo "INVALID [$name]: the generator fell behind"; exit 3; }
  [ $lrc -eq 1 ] || fail "generator exited with $lrc, expected 1 (FAIL)"
  [ "$(get pass)" = 0 ] || fail "summary: pass=$(get pass), expected 0"
  grep -q '^FAIL$' "$tmp/load.log" || fail "no FAIL verdict in the summary"
elif [ -n "${EXPECT_INVALID-}" ]; then
  [ $lrc -eq 3 ] || fail "generator exited with $lrc, expected 3 (invalid run)"
  [ "$(get invalid)" = 1 ] || fail "summary: invalid=$(get invalid), expected 1"
  grep -q '^INVALID$' "$tmp/load.log" || fail "no INVALID verdict in the summary"
  grep -q '^set title .*INVALID' "$tmp/plot.gp" || fail "the plot's title does not say INVALID"
else
# (starved connections make a run invalid, unless a close was wrong whatever
# the lag: then it is a FAIL, judged below, not retried)
[ "$(get invalid)" != 1 ] && [ $lrc -ne 3 ] ||
  { echo "INVALID [$name]: the generator fell behind"; exit 3; }
for kv in early=0 never=0 wrong=0 abrupt_fail=0 connect_fail=0 server_conns=0 server_timers=0 server_clean=1 pass=1; do
  k=${kv%=*} v=${kv#*=}
  [ "$(get "$k")" = "$v" ] || fail "summary: $k=$(get "$k"), expected $v"
done
[ "$(get silent)" = "$(( $(get on_time) + $(get late) ))" ] || fail "not every silent connection was closed"
# the load it was measured under, from /proc (every Linux has /proc/stat)
[ -n "$(get load_busy_pct)" ] && [ -n "$(get load_others_cpus)" ] ||
  fail "the RESULT line does not say the load it was measured under"
grep -q '^  machine  .* CPUs .*% busy' "$tmp/load.log" || fail "the summary does not say the machine's load"
[ $lrc -eq 0 ] || fail "generator exited with $lrc"
[ -s "$tmp/plot.csv" ] || fail "no plot csv"
below=$(awk -F, '!/^#/ { for (i = 1; i <= NF; i++) if ($i + 0 < 0) n++ } END { print n + 0 }' "$tmp/plot.csv")
[ "$below" = 0 ] || fail "a passing run drew $below values below zero (early closes it did not judge early)"
fi
for want in ${EXPECT_RESULT-}; do
  case $want in
    *'>='*) key=${want%%>=*} op='>=' lim=${want#*>=} ;;
    *'<='*) key=${want%%<=*} op='<=' lim=${want#*<=} ;;
    *) fail "EXPECT_RESULT=$EXPECT_RESULT: key>=X or key<=X, separated by spaces" ;;
  esac
  val=$(get "$key")
  [ -n "$val" ] && awk -v v="$val" -v m="$lim" -v op="$op" \
    'BEGIN { exit !(op == ">=" ? v + 0 >= m + 0 : v + 0 <= m + 0) }' ||
    fail "summary: $key=$val, expected $op $lim"
done
# the summary reads on a terminal: every line but RESULT under 100 characters
long=$(grep -v '^RESULT ' "$tmp/load.log" | awk 'length > 99' | head -1)
[ -z "$long" ] || fail "a summary line of ${#long} characters: $long"

# The server's own accounting after the run, then a graceful shutdown.
server_stop
if [ -n "${EXPECT_LOG-}" ]; then
  grep -Eq "$EXPECT_LOG" "$tmp/server.log" || fail "server output does not match /$EXPECT_LOG/"
fi
if [ -n "${EXPECT_STAT-}" ]; then
  key=${EXPECT_STAT%%>*} min=${EXPECT_STAT#*>}
  # the last STATS line of each worker (the final one) summed
  sum=$(grep '^STATS ' "$tmp/server.log" | awk -v k="$key" '
    { w=""; v=0; for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "worker") w = kv[2]; if (kv[1] == k) v = kv[2] } last[w] = v }
    END { s = 0; for (w in last) s += last[w]; print s }')
  [ "$sum" -gt "$min" ] || fail "server $key=$sum, expected > $min"
fi
echo "PASS [$name]"
exit 0
