#!/usr/bin/env bash
# tests/args/check_args.sh PROGRAM - run PROGRAM (idle-load, idle-server,
# idle-server-c, udp-load, udp-session-server or twheel-inspect) with bad
# arguments: each run must exit 2 before doing anything, print nothing on
# stdout and exactly one line on stderr, "NAME: ..." naming the option and
# what it needs. --help must exit 0 with the usage on stdout. Exit 0 pass,
# 1 fail.
set -u
prog=$1
name=$(basename "$prog")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-args-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect "ARGS" "MESSAGE": ARGS split on spaces, MESSAGE without "NAME: "
expect() {
  local rc
  # shellcheck disable=SC2086
  timeout 10 "$prog" $1 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || [ "$(cat "$tmp/err")" != "$name: $2" ]; then
    echo "FAIL: $name $1: exit $rc (want 2)"
    echo "  want: $name: $2"
    sed 's/^/  got:  /' "$tmp/err"
    sed 's/^/  stdout: /' "$tmp/out" | head -3
    fails=$((fails + 1))
  else
    echo "ok: $name $1 -> $2"
  fi
}

expect "--bogus" "unknown option '--bogus' ($name --help lists them)"
expect "stray" "unexpected argument 'stray' ($name --help lists the options)"
expect "--help=1" "--help takes no value"

case $name in
  idle-load)
    expect "--conns abc" "--conns needs a whole number from 0 to 10000000, not 'abc'"
    expect "--conns -5" "--conns needs a whole number from 0 to 10000000, not '-5'"
    expect "--conns 12x" "--conns needs a whole number from 0 to 10000000, not '12x'"
    expect "--conns" "--conns needs a value: a whole number from 0 to 10000000"
    expect "--seed x" "--seed needs a whole number, not 'x'"
    expect "--seed 99999999999999999999" "--seed needs a whole number, not '99999999999999999999'"
    expect "--idle-ms 5" "--idle-ms needs a whole number from 10 to 3600000, not '5'"
    expect "--silent 101" "--silent needs a whole number from 0 to 100, not '101'"
    expect "--port 0" "--port needs a whole number from 1 to 65535, not '0'"
    expect "--family 5" "--family needs 4 or 6, not '5'"
    expect "--host 10.0.0.1" "--host needs a loopback address (127.x.y.z or ::1), not '10.0.0.1'"
    expect "--host ::1 --family 4" "--host ::1 is not an IPv4 address (--family 4)"
    expect "--trace --quiet" "--trace needs a value, not the option '--quiet'"
    expect "--quiet=1" "--quiet takes no value"
    expect "--idle-ms 1000 --ping-ms 900" "--ping-ms 900 (+25% jitter) must stay below --idle-ms 1000"
    expect "--http --heartbeat" "--heartbeat and --http are two protocols: one at most"
    expect "--rate x" "--rate needs a whole number from 0 to 100000000, not 'x'"
    expect "--family 6 --conns 10001" \
      "--conns 10001 plus --abrupt 0 are too many for --per-src 10000 (IPv6 has one loopback source address)"
    expect "--conns 2500000 --abrupt 40001" "--conns 2500000 plus --abrupt 40001 are too many for --per-src 10000"
    expect "--conns 100000 --per-proc 1" \
      "--conns 100000 plus --abrupt 0 at --per-proc 1 take 100000 processes, at most 4096"
    # the bounds themselves are taken (they were refused one short: IPv6 held 9,999)
    for ok in "--family 6 --conns 10000" "--conns 2500000 --abrupt 40000" "--conns 4096 --per-proc 1"; do
      # shellcheck disable=SC2086
      if timeout 10 "$prog" $ok --dry-run >"$tmp/out" 2>"$tmp/err"; then
        echo "ok: $name $ok --dry-run"
      else
        echo "FAIL: $name $ok --dry-run refused: $(cat "$tmp/err")"
        fails=$((fails + 1))
      fi
    done
    ;;
  idle-server|idle-server-c)
    expect "--port abc" "--port needs a whole number from 0 to 65535, not 'abc'"
    expect "--port 70000" "--port needs a whole number from 0 to 65535, not '70000'"
    expect "--workers 0" "--workers needs a whole number from 1 to 256, not '0'"
    expect "--tick-us -1" "--tick-us needs a whole number from 1 to 1000000, not '-1'"
    expect "--nofile 3" "--nofile needs a whole number from 16 to 1073741824, not '3'"
    expect "--idle-ms" "--idle-ms needs a value: a whole number from 1 to 86400000"
    expect "--bind 10.0.0.1" "--bind needs a loopback address (127.x.y.z or ::1), not '10.0.0.1'"
    expect "--heartbeat=yes" "--heartbeat takes no value"
    expect "--http --heartbeat" "--heartbeat and --http are two protocols: one at most"
    expect "--ring-bufs 3" "--ring-bufs needs a power of two (or 0), not 3"
    expect "--ring-bufs 65536" "--ring-bufs needs a whole number from 0 to 32768, not '65536'"
    ;;
  udp-load)
    expect "--sessions abc" "--sessions needs a whole number from 1 to 67108864, not 'abc'"
    expect "--sessions" "--sessions needs a value: a whole number from 1 to 67108864"
    expect "--silent 101" "--silent needs a whole number from 0 to 100, not '101'"
    expect "--sockets 65" "--sockets needs a whole number from 1 to 64, not '65'"
    expect "--rate 0" "--rate needs a whole number from 1 to 100000000, not '0'"
    expect "--host ::1" "--host needs an IPv4 loopback address (127.x.y.z), not '::1'"
    expect "--plot --quiet" "--plot needs a value, not the option '--quiet'"
    expect "--quiet=1" "--quiet takes no value"
    ;;
  udp-session-server)
    expect "--max-sessions 0" "--max-sessions needs a whole number from 1 to 1073741824, not '0'"
    expect "--port 70000" "--port needs a whole number from 0 to 65535, not '70000'"
    expect "--buf-bytes 1" "--buf-bytes needs a whole number from 4096 to 1073741824, not '1'"
    expect "--bind 10.0.0.1" "--bind needs an IPv4 loopback address (127.x.y.z), not '10.0.0.1'"
    expect "--quiet=1" "--quiet takes no value"
    ;;
  twheel-inspect)
    expect "--n abc" "--n needs a whole number from 1 to 100000000, not 'abc'"
    expect "--n -5" "--n needs a whole number from 1 to 100000000, not '-5'"
    expect "--n" "--n needs a value: a whole number from 1 to 100000000"
    expect "--seed x" "--seed needs a whole number, not 'x'"
    expect "--max-delay 0" "--max-delay needs a whole number from 1 to 4611686018427387904, not '0'"
    expect "--log=1" "--log takes no value"
    ;;
  *) echo "check_args.sh: no cases for $name"; exit 1 ;;
esac

timeout 10 "$prog" --help >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^usage: $name " "$tmp/out"; then
  echo "FAIL: $name --help: exit $rc, stdout:"; head -3 "$tmp/out"
  fails=$((fails + 1))
fi
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS: $name"
