#!/usr/bin/env bash
# tests/demo/udp_load_ends.sh - udp-load, far behind on its pings, must
# still end its chatty sessions and its run.
#
# usage: udp_load_ends.sh UDP-SESSION-SERVER UDP-LOAD
#
# 20,000 chatty sessions each due a datagram every 5 ms (--idle-ms 20),
# 4 million a second, far more than one generator sends: its ping queue is
# always more than a send budget behind. The server's timeout is a minute,
# so that none of them closes on its own. The generator must still send
# its UDP_BYEs, end within 20 s and call the run INVALID (exit 3: it fell
# behind); the server must have seen 20,000 BYEs.
# Exit 0 pass, 1 fail, 77 skip (io_uring refused).
set -u
server=$1 load=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-udp-ends.XXXXXX")
spid=
cleanup() {
  if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then kill -KILL "$spid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- generator:"; cat "$tmp/load.log"; echo "--- server:"; cat "$tmp/server.log"; exit 1; }

"$server" --port 0 --idle-ms 60000 --max-sessions 32768 >"$tmp/server.log" 2>&1 &
spid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*ready: listening on .*:\([0-9]*\), .*/\1/p' "$tmp/server.log")
  [ -n "$port" ] && break
  if ! kill -0 "$spid" 2>/dev/null; then
    wait "$spid"; rc=$?
    [ $rc -eq 77 ] && { echo "SKIP: io_uring refused"; exit 77; }
    fail "server exited with $rc before listening"
  fi
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready after 10 s"

timeout 20 "$load" --port "$port" --quiet --sessions 20000 --silent 0 --idle-ms 20 --rate 1000000 \
  --grace-ms 0 >"$tmp/load.log" 2>&1
lrc=$?
[ $lrc -ne 124 ] || fail "the generator did not end within 20 s"
[ $lrc -eq 3 ] || fail "the generator exited with $lrc, expected 3 (invalid run: it fell behind)"
kill -TERM "$spid"
wait "$spid"; src=$?
spid=
[ $src -eq 0 ] || fail "server exited with $src after SIGTERM"
byes=$(sed -n 's/^STATS .* byes=\([0-9]*\) .*/\1/p' "$tmp/server.log" | tail -1)
[ "$byes" = 20000 ] || fail "the server saw byes=$byes, expected 20000"
echo "PASS: the generator ended (exit 3, invalid) and sent its 20,000 BYEs"
