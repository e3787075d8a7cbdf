# shellcheck shell=bash
# tests/demo/server.sh - sourced by the demo tests: the server under test,
# started, asked for its counters and stopped alike by each (bash).
#
# server_start NAME SERVER ARGS...: make $tmp (removed at exit, the server
#   killed if it still runs), start SERVER --port 0 ARGS with its output in
#   $tmp/server.log, and wait for its ready line; sets $name, $spid and
#   $port. Exits 77 (skip) where the kernel refuses io_uring or the --bind
#   address does not exist on this machine.
# server_stop: SIGTERM; the server must exit 0 within 5 s, each worker's
#   final STATS line saying no connection and no timer left.
# fail MESSAGE...: "FAIL [NAME]: MESSAGE" and the server's output; exit 1.
# stats: the server's STATS line, asked on a control connection, into
#   $stats_line (fails the test if none comes within 5 s); counter KEY:
#   KEY's value in that line.
# stats_until_closed: stats until it says conns=0, 5 s at most (the
#   caller checks: counter conns).

fail() { echo "FAIL [$name]: $*"; echo "--- server output:"; cat "$tmp/server.log"; exit 1; }

stats() {
  exec 5<>"/dev/tcp/127.0.0.1/$port" || fail "STATS: cannot connect"
  printf 'STATS\n' >&5
  stats_line=$(timeout 5 cat <&5)
  exec 5<&-
  [ -n "$stats_line" ] || fail "no STATS line"
}
counter() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats_line"; }

stats_until_closed() {
  for _ in $(seq 100); do stats; [ "$(counter conns)" = 0 ] && return; sleep 0.05; done
}

server_cleanup() {
  if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then kill -KILL "$spid" 2>/dev/null; fi
  rm -rf "$tmp"
}

server_start() {
  name=$1
  local server=$2 rc
  shift 2
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-demo-test.XXXXXX")
  spid=
  trap server_cleanup EXIT
  "$server" --port 0 "$@" >"$tmp/server.log" 2>&1 &
  spid=$!
  port=
  for _ in $(seq 200); do
    port=$(sed -n 's/.*ready: listening on .*:\([0-9]*\), .*/\1/p' "$tmp/server.log")
    [ -n "$port" ] && return 0
    if ! kill -0 "$spid" 2>/dev/null; then
      wait "$spid"; rc=$?
      [ $rc -eq 77 ] && { echo "SKIP [$name]: io_uring refused:"; cat "$tmp/server.log"; exit 77; }
      grep -q 'Cannot assign requested address\|Address family not supported' "$tmp/server.log" &&
        { echo "SKIP [$name]: no such loopback address here:"; cat "$tmp/server.log"; exit 77; }
      fail "server exited with $rc before listening"
    fi
    sleep 0.05
  done
  fail "server not ready after 10 s"
}

server_stop() {
  local src
  kill -TERM "$spid"
  for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$spid" 2>/dev/null && fail "server still running 5 s after SIGTERM"
  wait "$spid"; src=$?
  spid=
  [ $src -eq 0 ] || fail "server exited with $src after SIGTERM"
  grep -q '^STATS ' "$tmp/server.log" || fail "server printed no final STATS line"
  if grep '^STATS ' "$tmp/server.log" | grep -Ev ' conns=0 timers=0 ' >/dev/null; then
    fail "server reported connections or timers left"
  fi
}
