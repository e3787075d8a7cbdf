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
#
# Its INVALID line says why, with the figures: how far behind its
# schedule the pings went out (it said only "the generator fell behind or
# datagrams were dropped", whichever it was), and the RESULT line has
# lag_max_us and stall_max_us, as idle-load's (which scripts/demo.sh
# reads to say how far behind a retried run was).
#
# Then, against a stand-in server (python3) that answers every UDP_STATS
# but the one asked once all sessions are open, and no DATA: the run is
# INVALID (exit 3), and the summary says the server's memory and its CPU
# while opening are unknown, not the differences of a missing snapshot
# (read as 0, they wrapped to 1.8e19 KiB and 1.8e13 s); its RESULT line
# says starved=0 (every session silent: none can starve; it printed the
# invalid flag there), and its INVALID line names the missing reply.
#
# Last, against a stand-in that answers the first UDP_STATS and then goes
# away (closes its socket) after 50 DATA datagrams: the generator's
# datagrams find the port unreachable (ECONNREFUSED, from the kernel's
# ICMP), which says the server is gone: a FAIL (exit 1) that says so. It took the error for an empty socket and called the run
# INVALID, "the generator fell behind or datagrams were dropped", after
# waiting 5 s for a STATS reply. (It now ends in well under a second; the
# bound is 10 s, a hang's, for a loaded machine.)
#
# And against a stand-in that keeps its sessions as the server does but
# sends each UDP_CLOSED twice: a FAIL (exit 1) that counts the notices
# for sessions closed already. They were counted, never said, and the run
# passed. And against one whose STATS replies are longer than the
# generator reads: a FAIL that counts them (it read them cut).
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
grep -Eq '^INVALID RUN: a chatty datagram went out [0-9.]+ ms behind its schedule \(a quarter timeout: 5\.0\)' \
  "$tmp/load.log" || fail "the INVALID line does not say the pings fell behind, and how far"
grep -Eq '^RESULT .* lag_max_us=[0-9]+ stall_max_us=[0-9]+ invalid=1 ' "$tmp/load.log" ||
  fail "no lag_max_us and stall_max_us in the RESULT line"
kill -TERM "$spid"
wait "$spid"; src=$?
spid=
[ $src -eq 0 ] || fail "server exited with $src after SIGTERM"
byes=$(sed -n 's/^STATS .* byes=\([0-9]*\) .*/\1/p' "$tmp/server.log" | tail -1)
[ "$byes" = 20000 ] || fail "the server saw byes=$byes, expected 20000"
echo "PASS: the generator ended (exit 3, invalid) and sent its 20,000 BYEs"

python3 - "$load" >"$tmp/load.log" 2>&1 <<'EOF2'
import socket, struct, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(0.05)
load = subprocess.Popen([sys.argv[1], "--port", str(s.getsockname()[1]), "--quiet", "--sessions", "10",
                         "--silent", "100", "--idle-ms", "4", "--grace-ms", "0", "--rate", "100000"])
asked = 0
while load.poll() is None:
    try:
        msg, peer = s.recvfrom(64)
    except socket.timeout:
        continue
    magic, kind = struct.unpack_from("=IB", msg) if len(msg) == 24 else (0, 0)
    if magic == 0x53555754 and kind == 4:  # UDP_STATS
        asked += 1
        if asked != 2:  # the second is the one taken once all sessions are open
            s.sendto(b"STATS worker=0 workers=1 conns=0 timers=0 rss_kb=2000 utime_us=5000 stime_us=0", peer)
sys.exit(load.wait())
EOF2
lrc=$?
[ $lrc -eq 3 ] || fail "against a server that missed one STATS, the generator exited $lrc, expected 3"
grep -q '^  server memory  unknown' "$tmp/load.log" || fail "the server's memory not said unknown"
grep -q '^  server CPU .*unknown opening' "$tmp/load.log" || fail "the server's CPU while opening not said unknown"
huge=$(grep -Eo '[0-9]{12,}' "$tmp/load.log" | head -1)
[ -z "$huge" ] || fail "a figure of a missing snapshot: $huge"
grep -q '^RESULT .* starved=0 .* invalid=1 ' "$tmp/load.log" ||
  fail "RESULT of a run invalid for a missing STATS, none starved: want starved=0 invalid=1 (starved was the invalid flag)"
grep -q '^INVALID RUN: .*no STATS reply from the server once all sessions were open' "$tmp/load.log" ||
  fail "the INVALID line does not say which STATS reply was missing"
echo "PASS: a STATS reply missing, its figures said unknown, and said why the run is INVALID"

start=$(date +%s%N)
python3 - "$load" >"$tmp/load.log" 2>&1 <<'EOF2'
import socket, struct, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(0.05)
load = subprocess.Popen([sys.argv[1], "--port", str(s.getsockname()[1]), "--quiet", "--sessions", "1000",
                         "--idle-ms", "500", "--grace-ms", "500", "--rate", "1000"])
data = 0
while load.poll() is None and data < 50:
    try:
        msg, peer = s.recvfrom(64)
    except socket.timeout:
        continue
    magic, kind = struct.unpack_from("=IB", msg) if len(msg) == 24 else (0, 0)
    if magic == 0x53555754 and kind == 4:  # UDP_STATS
        s.sendto(b"STATS worker=0 workers=1 conns=0 timers=0 rss_kb=2000 utime_us=5000 stime_us=0", peer)
    data += magic == 0x53555754 and kind == 1
s.close()  # gone: the port unreachable from now on
try:
    sys.exit(load.wait(timeout=20))
except subprocess.TimeoutExpired:
    load.kill()
    sys.exit(124)
EOF2
lrc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ $lrc -eq 1 ] || fail "against a server gone mid-run, the generator exited $lrc, expected 1"
grep -q "port was unreachable" "$tmp/load.log" || fail "the server's port unreachable not said"
[ $took -lt 10000 ] || fail "against a server gone mid-run, the generator took $took ms (under 10000 expected)"
echo "PASS: a server gone mid-run, a FAIL that says so, in $took ms"

# A stand-in that keeps its sessions as the server does, in one of two
# ways: "twice" sends each UDP_CLOSED twice; "cut" pads its second STATS
# reply (the one asked once all sessions are open) with 2,100 bytes.
standin=$(cat <<'EOF2'
import socket, struct, subprocess, sys, time
mode = sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(0.005)
IDLE = 0.2
load = subprocess.Popen([sys.argv[1], "--port", str(s.getsockname()[1]), "--quiet", "--sessions", "20",
                         "--idle-ms", "200", "--tolerance-ms", "200", "--grace-ms", "300", "--rate", "1000"])
sessions = {}  # id -> (last datagram, peer)
asked = 0
while load.poll() is None:
    try:
        msg, peer = s.recvfrom(64)
        magic, kind, sid = struct.unpack_from("=IB3xQ", msg) if len(msg) == 24 else (0, 0, 0)
        if magic == 0x53555754 and kind == 4:  # UDP_STATS
            n = len(sessions)
            asked += 1
            pad = f" pad={'x' * 2100}" if mode == "cut" and asked == 2 else ""
            s.sendto(f"STATS worker=0 workers=1 conns={n} timers={n}{pad}".encode(), peer)
        elif magic == 0x53555754 and kind == 1:  # UDP_DATA
            sessions[sid] = (time.monotonic(), peer)
        elif magic == 0x53555754 and kind == 2:  # UDP_BYE
            sessions.pop(sid, None)
    except socket.timeout:
        pass
    now = time.monotonic()
    for sid, (last, peer) in list(sessions.items()):
        if now - last >= IDLE:
            del sessions[sid]
            notice = struct.pack("=IB3xQQ", 0x53555754, 3, sid, 0)  # UDP_CLOSED
            for _ in range(2 if mode == "twice" else 1):
                s.sendto(notice, peer)
sys.exit(load.wait())
EOF2
)
python3 -c "$standin" "$load" twice >"$tmp/load.log" 2>&1
lrc=$?
[ $lrc -eq 1 ] || [ $lrc -eq 3 ] || fail "against a server sending each notice twice, the generator exited $lrc"
if [ $lrc -eq 1 ]; then
  grep -Eq '^  wrong notices  [1-9][0-9]* for sessions closed already' "$tmp/load.log" ||
    fail "the notices sent twice not counted in the summary"
  grep -q '^FAIL: .*closed again [1-9]' "$tmp/load.log" || fail "the notices sent twice not in the verdict"
  echo "PASS: notices sent twice, a FAIL that counts them"
else
  echo "PASS: notices sent twice, a run the generator fell behind in (INVALID)"
fi

# A STATS reply longer than the generator's buffer (DEMO_STATS_MAX, 2,048
# bytes; the server's line is built in one) reaches it cut, with
# MSG_TRUNC: that is no STATS line of the protocol, but a datagram that
# is not one (bad), a FAIL whenever it came. The stand-in cuts one, the
# snapshot taken once all sessions are open (asked again after 500 ms).
# The generator read the first 2,048 bytes as the line (the values
# there, a number cut in two too) and passed the run.
python3 -c "$standin" "$load" cut >"$tmp/load.log" 2>&1
lrc=$?
[ $lrc -eq 1 ] || fail "against STATS replies cut by the generator's buffer, it exited $lrc, expected 1"
grep -Eq '^  wrong notices  0 for sessions closed already or ended by us, [1-9][0-9]* not ours or not one' \
  "$tmp/load.log" || fail "the cut STATS replies not counted as datagrams that are not ours"
grep -q '^FAIL: .* bad [1-9]' "$tmp/load.log" || fail "the cut STATS replies not in the verdict"
echo "PASS: STATS replies cut to the generator's buffer (MSG_TRUNC), a FAIL that counts them"
