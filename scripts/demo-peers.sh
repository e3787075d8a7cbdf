#!/usr/bin/env bash
# scripts/demo-peers.sh - the demo's servers beside the servers a user would
# otherwise deploy, under the same load generator, on the same machine, in
# one run: not part of scripts/test.sh (it takes minutes and the packages
# of scripts/deps.sh peers).
#
#   TCP (idle-load; by default every connection silent, the idle-timeout
#   job, since nginx cannot answer the echo protocol; with --chatty PCT,
#   PCT% of them chatty over HTTP/1.1 keep-alive, idle-load --http, for
#   every server: GET / answered by a 204, which resets the idle timeout):
#     c      idle-server-c          twheel-uring, provided-buffer ring (--http)
#     cpp    idle-server            the C++ layer (--http)
#     netty  NettyIdleServer.java   Netty NIO, IdleStateHandler per connection
#                                   (--http: a 204 per request head)
#     nginx  nginx -c (generated)   client_header_timeout = keepalive_timeout =
#                                   the idle timeout, location / { return 204; }
#   UDP (udp-load, half the sessions silent, the rest chatty):
#     c      udp-session-server     one socket, one loop, one wheel
#     netty  NettyUdpServer.java    one DatagramChannel, a HashedWheelTimer
#                                   timeout per session
#
# Each server gets as many processes as RLIMIT_NOFILE requires (workers,
# JVMs with SO_REUSEPORT, nginx workers), is pinned to CPU 0 and the
# generator to CPU 1 (2 cores or more), both at nice -19 when run as root
# (which orders them against this session's other processes only: the
# kernel's autogroups share the cores between sessions). Per run: sessions
# held, close lateness p50/p99/max as the generator sees it, early and
# never-closed counts, server CPU seconds, memory per session (the server's resident
# set and the kernel's slab, scripts/demo-mem.sh), and its wake-ups a
# second (context switches of its threads) in the middle of the timeout,
# after all sessions are open; for TCP, wrong (a chatty connection closed
# or a bad reply), the chatty share and the connect rate. One line each in
# OUT/summary.tsv; the generators' logs and lateness CDFs (OUT/*.csv)
# beside it.
#
#   scripts/demo-peers.sh [--modes "tcp udp"] [--scales "10000 100000 1000000"]
#                         [--servers "c cpp netty nginx"] [--build-dir DIR]
#                         [--out DIR] [--port N] [--no-deps]
#                         [--chatty PCT] [--rate N] [--idle-ms MS]
#     --chatty PCT  TCP: PCT% of the connections chatty over HTTP (0: all silent)
#     --rate N      TCP: idle-load opens N connections a second (0: at once)
#     --idle-ms MS  the idle timeout at every scale (default: 5 s up to 20,000
#                   sessions, 20 s up to 200,000, 120 s above); with --rate,
#                   longer than N / rate seconds holds them all at once
# shellcheck disable=SC2317 # functions run by supervise (scripts/lib.sh)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
modes="tcp udp" scales="10000 100000" servers="c cpp netty nginx"
build_dir="$root/build-demo" out= deps=1 port=7000 chatty=0 rate=0 idle_ms=

die() { echo "demo-peers: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --modes|--scales|--servers|--build-dir|--out|--port|--chatty|--rate|--idle-ms)
      [ $# -ge 2 ] || die "$1 needs a value"
      v=${1#--}; v=${v//-/_}; printf -v "$v" '%s' "$2"; shift 2 ;;
    --no-deps) deps=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^# shellcheck/d;/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
done
# every check before anything is installed, built or changed: each number
# within what the generators take, and so within the shell's arithmetic
# (number, scripts/lib.sh)
# shellcheck disable=SC2034 # read by lib.sh
LIB_NAME=demo-peers
# shellcheck source=lib.sh
. "$here/lib.sh"
ns=
for n in $scales; do number n --scales 100 2500000; ns="$ns $n"; done
scales=$ns
for m in $modes; do case $m in tcp|udp) ;; *) die "--modes: tcp or udp, not '$m'" ;; esac; done
number chatty --chatty 0 100
number rate --rate 0 100000000
[ -z "$idle_ms" ] || number idle_ms --idle-ms 1000 3600000
number port --port 1 65535
for s in $servers; do case $s in c|cpp|netty|nginx) ;; *) die "--servers: c, cpp, netty or nginx, not '$s'" ;; esac; done
out=${out:-$build_dir/peers}
mkdir -p "$out"

# shellcheck source=demo-mem.sh
. "$here/demo-mem.sh"

[ $deps -eq 0 ] || bash "$here/deps.sh" peers
if [ ! -f "$build_dir/build.ninja" ]; then
  meson setup "$build_dir" "$root" --buildtype=release -Ddemo=true -Dtests=false >/dev/null
fi
ninja -C "$build_dir" demo/idle-load demo/idle-server-c demo/idle-server demo/udp-load \
  demo/udp-session-server >/dev/null
cp=$(printf '/usr/share/java/netty-%s.jar:' common buffer transport handler codec resolver)
javac -nowarn -d "$out/classes" -cp "$cp" "$root"/demo/peers/*.java
cores=$(nproc)
spin=() lpin=()
prio=()
[ "$(id -u)" -eq 0 ] && prio=(nice -n -19)
if [ "$cores" -ge 2 ] && command -v taskset >/dev/null; then
  spin=("${prio[@]}" taskset -c 0) lpin=("${prio[@]}" taskset -c 1)
fi

ulimit -n "$(ulimit -Hn)"
budget=$(( $(ulimit -n) - 256 ))
spid=''

# The idle timeout for N sessions: long enough that all are open well
# before the first one times out on a loaded 2-core machine.
idle_for() {
  if [ -n "$idle_ms" ]; then echo "$idle_ms"; elif [ "$1" -gt 200000 ]; then echo 120000; elif [ "$1" -gt 20000 ]; then echo 20000; else echo 5000; fi
}

# nginx_conf DIR K IDLE_MS: a configuration holding idle connections only
nginx_conf() {
  cat >"$1/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes $2;
worker_rlimit_nofile $(( budget + 256 ));
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections $(( budget + 200 )); multi_accept on; }
http {
  access_log off;
  client_header_timeout $(( $3 / 1000 ))s;
  keepalive_timeout $(( $3 / 1000 ))s;
  server { listen 127.0.0.1:$port reuseport backlog=65535; location / { return 204; } }
}
EOF
}

# With --chatty, the TCP servers speak HTTP/1.1 keep-alive (nginx always does).
proto=()
[ "$chatty" -eq 0 ] || proto=(--http)

# start_server MODE SERVER N IDLE_MS LOG: start it in the background (spid)
# and wait until it listens; 1 if it did not.
start_server() {
  local mode=$1 srv=$2 n=$3 idle=$4 log=$5 k
  k=$(( (n * 12 / 10 + budget - 1) / budget )); [ "$k" -ge 1 ] || k=1
  case $mode/$srv in
    tcp/c) "${spin[@]}" "$build_dir/demo/idle-server-c" --port $port --idle-ms "$idle" --workers "$k" \
             "${proto[@]}" >"$log" 2>&1 & ;;
    tcp/cpp) "${spin[@]}" "$build_dir/demo/idle-server" --port $port --idle-ms "$idle" --workers "$k" \
               "${proto[@]}" >"$log" 2>&1 & ;;
    tcp/netty) "${spin[@]}" bash -c 'k=$1; shift; for i in $(seq "$k"); do
                 java -Xmx512m -cp "$1:$2" NettyIdleServer --port "$3" --idle-ms "$4" --reuseport "${@:5}" & done; wait' \
                 _ "$k" "$out/classes" "$cp" $port "$idle" "${proto[@]}" >"$log" 2>&1 & ;;
    tcp/nginx) mkdir -p "$out/nginx"; nginx_conf "$out/nginx" "$k" "$idle"
               "${spin[@]}" nginx -p "$out/nginx" -c "$out/nginx/nginx.conf" >"$log" 2>&1 & ;;
    udp/c) "${spin[@]}" "$build_dir/demo/udp-session-server" --port $port --idle-ms "$idle" \
             --max-sessions "$n" >"$log" 2>&1 & ;;
    udp/netty) "${spin[@]}" java -cp "$out/classes:$cp" NettyUdpServer --port $port --idle-ms "$idle" >"$log" 2>&1 & ;;
  esac
  spid=$!
  local want=1 tries=300
  # k JVMs start at once on one core: 30 s, and 3 s more for each
  [ "$srv" = netty ] && [ "$mode" = tcp ] && want=$k tries=$(( 300 + 30 * k ))
  for _ in $(seq $tries); do
    if [ "$srv" = nginx ]; then [ -n "$(ss -Hltn "sport = :$port")" ] && return 0
    elif [ "$(cat "$log" 2>/dev/null | grep -c 'ready: listening')" -ge "$want" ]; then return 0; fi
    kill -0 "$spid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

stop_server() {
  local p
  for p in $(pgrep -P "$spid" 2>/dev/null) "$spid"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  for p in $(pgrep -P "$spid" 2>/dev/null) "$spid"; do kill -KILL "$p" 2>/dev/null || true; done
  wait "$spid" 2>/dev/null || true
  spid=''
}

# get KEY FILE: KEY=value from the generator's RESULT line
get() { grep -m1 '^RESULT ' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# row MODE SERVER N LOG MEM T0 IDLE_MS STATUS: one line of summary.tsv
row() {
  local mode=$1 srv=$2 n=$3 log=$4 mem=$5 t0=$6 idle=$7 st=$8 lat cpu held own kern wk ch=- rt=- per=$3
  if [ "$mode" = tcp ]; then
    lat=$(awk '/^ *lateness ms/ {print $4, $6, $8; exit}' "$log")
    cpu=$(sed -n 's/^ *CPU *server \([0-9.]*\) s.*/\1/p' "$log")
    # the most held at once (a run paced by --rate, its timeout shorter
    # than the opening, holds fewer than it opens), else those opened
    held=$(mem_held "$(( $(get conns "$log") - $(get connect_fail "$log") ))" "$log")
    ch=$chatty rt=$rate
  else
    lat=$(awk '/^ *lateness ms/ {print $4, $6, $8; exit}' "$log")
    cpu=$(sed -n 's/^ *server CPU *\([0-9.]*\) s.*/\1/p' "$log")
    held=$(sed -n 's/.*peak \([0-9]*\) held.*/\1/p' "$log")
  fi
  # memory per session held, not opened
  [ "${held:-0}" -gt 0 ] 2>/dev/null && per=$held
  read -r own kern < <(awk -v n="$per" 'NR == 1 { r0 = $2; s0 = $3 } { if ($2 > r) r = $2; if ($3 > s) s = $3 }
    END { printf "%.0f %.0f\n", (r - r0) * 1024 / n, (s - s0) * 1024 / n }' "$mem")
  wk=$(wakeups "$mem" "$(awk -v t="$t0" -v i="$idle" 'BEGIN {printf "%.3f", t + i / 2000}')" \
    "$(awk -v t="$t0" -v i="$idle" 'BEGIN {printf "%.3f", t + i * 0.9 / 1000}')")
  # 15 fields, 17 columns: lat holds three (p50 p99 max)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$srv" "$n" "${held:--}" \
    "${lat// /$'\t'}" "$(get early "$log")" "$(get never "$log")" "${cpu:--}" "$own" "$kern" "$wk" "$st" \
    "$(get wrong "$log")" "$ch" "$rt"
}

# run_one MODE SERVER N
run_one() {
  local mode=$1 srv=$2 n=$3 idle tag gen st=0 t0
  idle=$(idle_for "$n"); tag="$mode-$srv-$n"
  echo "demo-peers: $tag: idle timeout $idle ms, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if ! start_server "$mode" "$srv" "$n" "$idle" "$out/$tag.server.log"; then
    echo "demo-peers: $tag: the server did not start:"; tail -5 "$out/$tag.server.log"; stop_server; return 0
  fi
  mem_start "$spid" "$out/$tag.mem"
  t0=$(date +%s.%N | cut -c1-14)
  if [ "$mode" = tcp ]; then
    gen=("$build_dir/demo/idle-load" --conns "$n" --silent $(( 100 - chatty )) "${proto[@]}")
    [ "$rate" -eq 0 ] || gen+=(--rate "$rate")
    case $srv in netty|nginx) gen+=(--no-stats --server-pid "$spid") ;; esac
  else
    gen=("$build_dir/demo/udp-load" --sessions "$n" --silent 50)
  fi
  "${lpin[@]}" "${gen[@]}" --port $port --idle-ms "$idle" --plot "$out/$tag" >"$out/$tag.log" 2>&1 || st=$?
  mem_stop
  stop_server
  row "$mode" "$srv" "$n" "$out/$tag.log" "$out/$tag.mem" "$t0" "$idle" "$st" | tee -a "$out/summary.tsv"
}

# peers: the runs, the worker of supervise (scripts/lib.sh): a process
# group of its own, with no trap; Ctrl-C, or SIGTERM or SIGHUP to this
# script, stops the whole group (servers, generators, samplers); the
# kernel settings are put back (by supervise) whichever way it ends.
peers() {
  # Kernel settings raised where allowed, each said with its old value
  # and put back at the end, whichever way the script ends (scripts/lib.sh).
  raise_sysctl net.core.rmem_max 67108864
  raise_sysctl net.core.wmem_max 67108864
  raise_sysctl fs.file-max 2600000
  raise_sysctl net.ipv4.ip_local_port_range "1024 65535"
  raise_sysctl net.core.somaxconn 65535
  raise_sysctl net.ipv4.tcp_max_syn_backlog 65535
  printf 'mode\tserver\tsessions\theld\tlat_p50_ms\tlat_p99_ms\tlat_max_ms\tearly\tnever\tcpu_s\town_B\tkernel_B\twakeups_s\texit\twrong\tchatty_pct\trate\n' \
    >"$out/summary.tsv"
  echo "demo-peers: $(nproc) CPUs, RLIMIT_NOFILE $(ulimit -n), results in $out"
  for mode in $modes; do
    for n in $scales; do
      for srv in $servers; do
        [ "$mode" = udp ] && { [ "$srv" = cpp ] || [ "$srv" = nginx ]; } && continue
        run_one "$mode" "$srv" "$n"
      done
    done
  done
  column -t -s $'\t' "$out/summary.tsv"
}

supervise peers
