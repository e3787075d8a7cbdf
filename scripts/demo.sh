#!/usr/bin/env bash
# scripts/demo.sh - libtwheel's main demo, the README's main command.
#
# Installs what is missing (scripts/deps.sh demo), builds a release build in
# build-demo/ (-Ddemo=true), starts the idle-timeout TCP server on the io_uring loop on
# 127.0.0.1, runs the load generator against it (N connections, a share of
# them silent, the rest chatty), prints the generator's summary, stops the
# server and exits with the generator's status (0: every silent connection
# closed after the idle timeout and none early, no chatty one closed, and the
# server left with no connection and no pending timer).
#
#   scripts/demo.sh                    10,000 connections, half silent, 2 s timeout
#   scripts/demo.sh --conns 100000     the large run (idle timeout 10 s unless given)
#   scripts/demo.sh --udp --sessions 1000000
#                                      UDP session mode: one socket, one loop, one wheel
#   scripts/demo.sh --help             every option
#
# See docs/demo.md for what the summary means and measured results.
# shellcheck disable=SC2317 # functions run by supervise (scripts/lib.sh)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

conns=10000
silent=50
idle_ms=
heartbeat=0
http=0
abrupt=0
rate=
workers=
server_kind=auto
port=7000
build_dir="$root/build-demo"
deps=1
udp=0
sessions=10000
pin=1
extra=()

usage() {
  cat <<EOF
usage: scripts/demo.sh [options] [-- generator options]
  --conns N        client connections, 1 to 2,500,000 (10000)
  --silent PCT     percent of them that stay silent, 0 to 100 (50)
  --idle-ms MS     the server's idle timeout, 10 to 3,600,000 (2000; 10000 above
                   20,000 connections; above 200,000: the time to open them all
                   plus 40 s, at least 120 s)
  --heartbeat      PING/PONG heartbeat protocol instead of echo
  --http           HTTP/1.1 keep-alive instead of echo: GET / answered by a 204
  --abrupt N       add N abrupt clients (reset, half-close, vanish, flood), up to
                   1,000,000 (0)
  --rate N         open at most N connections a second (idle-load --rate; default:
                   as fast as it can, 5000 above 200,000 connections: the silent ones
                   time out at the rate they were opened, and one core closes
                   5,000 TCP connections a second on time; 0: as fast as it can);
                   UDP mode: sessions a second (udp-load's 50000)
  --workers K      server worker processes, 1 to 256 (default: as many as
                   RLIMIT_NOFILE needs)
  --server c|cpp   which server to run (default: the C++ one if it was built, else C)
  --port N         TCP port on 127.0.0.1 (7000)
  --build-dir DIR  build directory (build-demo/ at the repository root)
  --no-deps        do not run scripts/deps.sh
  --udp            UDP session mode: udp-session-server and udp-load (one server
                   process, one loop, one wheel, one UDP socket)
  --sessions N     UDP mode: sessions, 1 to 67,108,864 (10000); idle timeout 2 s, 10 s above
                   20,000, 30 s above 200,000 unless --idle-ms
  --no-pin         do not pin the server to CPU 0 and the generator to CPU 1 at nice -19
                   (UDP mode, and TCP above 20,000 connections)
Anything after -- goes to the load generator (see: build-demo/demo/idle-load --help),
which checks it before any kernel setting is changed.
Kernel settings (sysctl) raised for a run are printed with their old values and put
back when the demo ends, whichever way it ends (not after a SIGKILL: see docs/demo.md).
Exit: 0 pass, 1 fail, 2 usage, 3 invalid run (the generator fell behind),
77 the kernel refuses io_uring or what the demo needs (Linux 5.19),
130, 143, 129 stopped by SIGINT (Ctrl-C), SIGTERM, SIGHUP (all put back).
EOF
}

die() { echo "demo: $*" >&2; exit 2; }
# value OPTION ARGS...: the option's value, which must be there
value() { [ $# -ge 2 ] && [ -n "$2" ] && [[ $2 != --* ]] || die "$1 needs a value (see --help)"; }
given=() # the options given, for the checks below
while [ $# -gt 0 ]; do
  case $1 in
    --conns|--silent|--idle-ms|--abrupt|--rate|--workers|--server|--port|--build-dir|--sessions)
      value "$@"
      v=${1#--}; v=${v//-/_}
      [ "$v" = server ] && v=server_kind
      printf -v "$v" '%s' "$2"
      given+=("$1")
      shift 2 ;;
    --heartbeat) heartbeat=1; given+=("$1"); shift ;;
    --http) http=1; given+=("$1"); shift ;;
    --udp) udp=1; shift ;;
    --no-pin) pin=0; shift ;;
    --no-deps) deps=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "demo: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

# Every check before anything is installed, built or changed: each number
# within what the programs it goes to accept (idle-load, idle-server,
# udp-load, udp-session-server), and so within the shell's arithmetic
# (number, scripts/lib.sh).
# shellcheck disable=SC2034 # read by lib.sh
LIB_NAME=demo
# shellcheck source=lib.sh
. "$here/lib.sh"
is_given() { local g; for g in "${given[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
if [ $udp -eq 1 ]; then
  for g in --conns --abrupt --heartbeat --http --workers --server; do
    ! is_given $g || die "$g is for the TCP demo, not --udp (UDP: --sessions, --silent, --idle-ms, --rate, --port)"
  done
  number sessions --sessions 1 67108864
  [ -z "$rate" ] || number rate --rate 1 100000000
else
  ! is_given --sessions || die "--sessions is for the UDP demo (--udp); TCP: --conns"
  number conns --conns 1 2500000
  number abrupt --abrupt 0 1000000
  # the generator's source addresses: 254 on 127.0.0.0/8, 10,000 connections each
  [ $(( conns + abrupt )) -le 2540000 ] ||
    die "--conns $conns plus --abrupt $abrupt: at most 2540000 together (254 loopback addresses)"
  [ -z "$rate" ] || number rate --rate 0 100000000
  [ "$rate" != 0 ] || rate='' # as fast as it can: the generator's default
  [ -z "$workers" ] || number workers --workers 1 256
  [ $(( heartbeat + http )) -le 1 ] || die "--heartbeat and --http are two protocols: one at most"
  case $server_kind in auto|c|cpp) ;; *) die "--server must be c or cpp, not '$server_kind'" ;; esac
fi
number silent --silent 0 100
number port --port 1 65535
[ -z "$idle_ms" ] || number idle_ms --idle-ms 10 3600000
[ ! -e "$build_dir" ] || [ -d "$build_dir" ] || die "--build-dir $build_dir is not a directory"
if [ -z "$idle_ms" ] && [ $udp -eq 1 ]; then
  # the chatty sessions send every quarter timeout: 30 s keeps 500,000 of
  # them at 67,000 datagrams a second
  if [ "$sessions" -gt 200000 ]; then idle_ms=30000
  elif [ "$sessions" -gt 20000 ]; then idle_ms=10000; else idle_ms=2000; fi
fi
if [ $udp -eq 0 ] && [ "$conns" -gt 200000 ]; then
  # The silent connections time out at the rate they were opened: paced,
  # so that the close burst stays within what one core closes on time
  # (docs/demo.md); the timeout outlasts the opening, so that every
  # connection is held at once.
  is_given --rate || rate=5000
  if [ -z "$idle_ms" ]; then
    idle_ms=40000
    [ -z "$rate" ] || idle_ms=$(( conns / rate * 1000 + 40000 ))
    [ "$idle_ms" -le 3600000 ] || die "--conns $conns at --rate $rate a second take" \
      "$(( conns / rate )) s to open: the idle timeout that outlasts that (plus 40 s)" \
      "is above the generator's hour (3600000 ms); raise --rate, or give --idle-ms"
  fi
  [ "$idle_ms" -ge 120000 ] || idle_ms=120000
fi
if [ -z "$idle_ms" ]; then
  # Above 20,000 connections the chatty ones' pings (one per quarter
  # timeout each) would swamp a small machine at 2 s; 10 s keeps them at
  # a realistic rate.
  if [ "$conns" -gt 20000 ]; then idle_ms=10000; else idle_ms=2000; fi
fi

# 1. Dependencies and build, one phase each (scripts/lib.sh: output in
# build-demo/logs, named if a phase fails; a table of times at the end).
# shellcheck source=demo-mem.sh
. "$here/demo-mem.sh"
# Pinned runs (large TCP ones, the UDP mode) also run at nice -19 where
# allowed: ahead of this session's other processes (the kernel's
# autogroups still share the cores with other sessions' jobs).
prio=()
[ "$(id -u)" -eq 0 ] && prio=(nice -n -19)
LOG_DIR=$build_dir/logs

# The server, stopped by stop_server (and by supervise, with the rest of
# the worker's process group, however the demo ends); returns its exit
# status (SIGKILL after 5 s).
spid='' slog=''
stop_server() {
  local rc=0
  if [ -n "$spid" ]; then
    kill -TERM "$spid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null || rc=$?
  fi
  spid=
  return $rc
}
# The server said nothing of being ready: show what it said and exit with
# its status (77: the kernel refuses io_uring or what the server needs),
# or 1 (it was still running, or exited 0).
not_started() {
  local rc=0
  echo "demo: the server did not start:" >&2
  cat "$slog" >&2
  stop_server || rc=$?
  exit $(( rc ? rc : 1 ))
}

# check_args PROGRAM ARGS...: the generator checks its options (the
# demo's and those after --) before any kernel setting is changed
check_args() {
  local err
  err=$("$@" --dry-run 2>&1 >/dev/null) && return 0
  echo "${err:-demo: $(basename "$1") refused its options}" >&2
  exit 2
}

# An INVALID run (the generator fell behind: exit 3) measured nothing of
# the server; it is run again, at most $tries runs in all. On a busy
# machine the generator is kept off its CPU for tens of milliseconds at a
# time, whatever it has to do: each retry judges lateness four times
# coarser (--tolerance-ms 200, then 800: how far behind the generator may
# fall, and where "late" begins; no other term of PASS depends on it),
# and, in what the options left to the demo, gives the generator less to
# do at once: the connections (sessions) opened at a pace, half the last
# one (the first retry: over 4 s, at most 5,000 a second; UDP 25,000),
# and twice the timeout (half the pings a second). A FAIL is never
# retried. Above 200,000 connections a run takes minutes at a pace
# already chosen for the server: not retried.
tries=3 tolerance=''
# slow_down: the next try's --tolerance-ms, --rate and --idle-ms; says what changed
slow_down() {
  local said='' behind why
  behind=$(sed -n 's/^RESULT .* lag_max_us=\([0-9]*\) stall_max_us=\([0-9]*\).*/\1 \2/p' "$PHASE_LOG" |
           awk '{ m = $1 > $2 ? $1 : $2; printf "%.0f", m / 1000 }')
  if [[ " ${extra[*]} " != *" --tolerance-ms"* ]]; then # else the one given after -- holds
    tolerance=$(( ${tolerance:-50} * 4 ))
    said=", lateness judged to $tolerance ms${behind:+ (it was $behind ms behind)}"
  fi
  if ! is_given --rate; then
    if [ -z "$rate" ]; then
      # over 4 s, at most 5,000 a second (what one core closes on time,
      # above), UDP at most half udp-load's 50,000
      rate=$(( (${udp_n:-$conns} + 3) / 4 ))
      [ "$rate" -le $(( udp ? 25000 : 5000 )) ] || rate=$(( udp ? 25000 : 5000 ))
    elif [ "$rate" -gt 1 ]; then
      rate=$(( rate / 2 ))
    fi
    said="$said, opened at $rate a second"
  fi
  if ! is_given --idle-ms && [ $(( idle_ms * 2 )) -le 3600000 ]; then
    idle_ms=$(( idle_ms * 2 ))
    said="$said, a $idle_ms ms timeout (half the pings a second)"
  fi
  # udp-load names the cause (its pings or reads behind, datagrams
  # dropped, a STATS reply missing): said as it said it
  if [ $udp -eq 1 ]; then
    why=$(sed -n 's/^INVALID RUN: \(.*\): this run says nothing of the server$/\1/p' "$PHASE_LOG" | tail -1)
  fi
  echo "demo: INVALID: ${why:-the generator fell behind}, so this run says nothing of the server;" \
    "try $(( try + 1 )) of $tries${said}"
}
# measured_under: the load the last run was measured under, from its
# generator's RESULT line ("" if it has none)
measured_under() {
  sed -n 's/^RESULT .* load_busy_pct=\([0-9.]*\) load_others_cpus=\([0-9.]*\).*/\1 \2/p' "$PHASE_LOG" |
    tail -1 | awk '{ printf "; measured with the CPUs %s%% busy, %s of them by other programs", $1, $2 }'
}
# verdict_line: the last line, the run's verdict
verdict_line() {
  case $status in
    0) echo "demo: PASS${try:+ (run $try of at most $tries$(measured_under))}" ;;
    1) echo "demo: FAIL (the summary above says which connections$(measured_under); logs: $LOG_DIR)" ;;
    3) invalid_end ;;
    *) echo "demo: the generator exited with $status (logs: $LOG_DIR)" ;;
  esac
}
# invalid_end: the one line after the last INVALID try
invalid_end() {
  echo "demo: INVALID after $tries tries: this machine is too busy for the generator to keep" \
    "time (load average $(cut -d' ' -f1 /proc/loadavg)); run it when it is quieter, or with fewer" \
    "$( ((udp)) && echo "sessions (--sessions 2000)" || echo "connections (--conns 2000)")" \
    "and a longer timeout (--idle-ms 8000)"
}

# What a large TCP run needs from the kernel, set where allowed; where a
# limit cannot be raised, one line says which and how far it allows, and
# conns is lowered to that. About 8 KiB of memory a connection (both ends'
# sockets, files and dentries, and both programs' own).
large_run_setup() {
  raise_sysctl fs.file-max $(( total * 2 + 200000 ))
  raise_sysctl fs.nr_open 1048576
  raise_sysctl net.ipv4.ip_local_port_range "1024 65535"
  raise_sysctl net.core.somaxconn 65535
  raise_sysctl net.ipv4.tcp_max_syn_backlog 65535
  raise_sysctl net.ipv4.tcp_mem "1048576 1572864 2097152"
  local avail files fit
  avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
  fit=$(( avail * 8 / 10 / 8 ))
  if [ "$total" -gt "$fit" ]; then
    echo "demo: memory: MemAvailable $(( avail / 1024 )) MiB holds about $fit connections at 8 KiB each: running $fit"
    conns=$(( fit - abrupt )); total=$fit
  fi
  files=$(( ($(sysctl -n fs.file-max) - $(cut -f1 /proc/sys/fs/file-nr)) / 2 - 1000 ))
  if [ "$total" -gt "$files" ]; then
    echo "demo: fs.file-max leaves room for $files connections (two descriptors each): running $files"
    conns=$(( files - abrupt )); total=$files
  fi
  if [ $(( (total * 12 / 10 + budget - 1) / budget )) -gt 256 ]; then
    fit=$(( 256 * budget * 10 / 12 ))
    echo "demo: at most 256 server workers of $budget descriptors: running $fit connections"
    conns=$(( fit - abrupt )); total=$fit
  fi
}

# configure: the build directory (re)configured with the demo when it
# lacks its targets; $all_targets, the targets it has
configure() {
  # (not "ninja | grep -q": with pipefail, grep closing the pipe early would
  # make the test fail whenever ninja gets SIGPIPE)
  all_targets=$(ninja -C "$build_dir" -t targets all 2>/dev/null || true)
  if ! grep -q '^demo/idle-load:' <<<"$all_targets"; then
    reconf=()
    [ -f "$build_dir/build.ninja" ] && reconf=(--reconfigure)
    # -Dtests=false: the test frameworks are not among the demo's packages
    phase "configure $build_dir (release, -Ddemo=true)" \
      meson setup "${reconf[@]}" "$build_dir" "$root" --buildtype=release -Ddemo=true \
        -Dtests=false || exit 1
    all_targets=$(ninja -C "$build_dir" -t targets all 2>/dev/null || true)
  fi
}

# udp_demo: the UDP session mode: build, the runs, the verdict (exits)
udp_demo() {
  phase "build the UDP session server and its generator" \
    ninja -C "$build_dir" demo/udp-session-server demo/udp-load || exit 1
  userver="$build_dir/demo/udp-session-server" uload="$build_dir/demo/udp-load"
  [ -x "$userver" ] || { echo "demo: $userver was not built (is liburing installed?)" >&2; exit 1; }
  largs=(--port "$port" --sessions "$sessions" --silent "$silent" --idle-ms "$idle_ms"
         --plot "$LOG_DIR/udp-lateness" ${rate:+--rate "$rate"})
  check_args "$uload" "${largs[@]}" "${extra[@]}"
  # Socket buffers: both programs ask for 64 MiB with SO_RCVBUFFORCE (root);
  # without that privilege net.core.[rw]mem_max is the bound: raise it where allowed.
  raise_sysctl net.core.rmem_max 67108864
  raise_sysctl net.core.wmem_max 67108864
  spin=() lpin=()
  if [ $pin -eq 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    spin=("${prio[@]}" taskset -c 0) lpin=("${prio[@]}" taskset -c 1)
    echo "demo: the server pinned to CPU 0, the generator to CPU 1${prio:+, both at nice -19} (--no-pin: not)"
  fi
  udp_n=$sessions
  slog="$LOG_DIR/udp-server.log" # kept: its last STATS line has the server's own figures
  for ((try = 1; try <= tries; try++)); do
    largs=(--port "$port" --sessions "$sessions" --silent "$silent" --idle-ms "$idle_ms"
           --plot "$LOG_DIR/udp-lateness" ${rate:+--rate "$rate"} ${tolerance:+--tolerance-ms "$tolerance"})
    echo "demo: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    : >"$slog" # emptied here, as run_tcp's (below)
    "${spin[@]}" "$userver" --port "$port" --idle-ms "$idle_ms" --max-sessions "$sessions" >"$slog" 2>&1 &
    spid=$!
    for _ in $(seq 100); do
      grep -q 'ready: listening' "$slog" && break
      kill -0 "$spid" 2>/dev/null || break # it ended: no need to wait 5 s to say so
      sleep 0.05
    done
    grep -q 'ready: listening' "$slog" || not_started
    echo "demo: $(grep -m1 'ready: listening' "$slog" | sed 's/^udp-session-server: //')"
    phase -v -l 0=PASS -l 1=FAIL -l 3=INVALID "run: $sessions UDP sessions, $silent% silent, timeout $idle_ms ms${rate:+, $rate/s}$(
        [ $try -eq 1 ] || echo ", try $try${tolerance:+, tolerance $tolerance ms}")" \
      "${lpin[@]}" "$uload" "${largs[@]}" "${extra[@]}" && status=0 || status=$?
    echo "demo: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    stop_server || { src=$?; echo "demo: the server exited with $src:"; cat "$slog"; status=1; }
    [ $status -eq 3 ] && [ $try -lt $tries ] || break
    slow_down
  done
  echo "demo: the server's last words: $slog"
  put_back_sysctls # before the table: the verdict is the last line
  phase_table
  verdict_line
  exit $status
}

# tcp_args: the server's and the generator's options
tcp_args() {
  sargs=(--port "$port" --idle-ms "$idle_ms" --workers "${workers:-1}")
  largs=(--port "$port" --conns "$conns" --silent "$silent" --idle-ms "$idle_ms" --abrupt "$abrupt"
         ${tolerance:+--tolerance-ms "$tolerance"})
  # the closes' lateness beside the logs: lateness.csv, .gp and (gnuplot) .png
  largs+=(--plot "$LOG_DIR/lateness")
  if [ $heartbeat -eq 1 ]; then sargs+=(--heartbeat); largs+=(--heartbeat); fi
  if [ $http -eq 1 ]; then sargs+=(--http); largs+=(--http); fi
  # --rate: connects paced (the silent ones then time out at that rate too)
  [ -z "$rate" ] || largs+=(--rate "$rate")
}
# run_tcp: one run: the server started, the generator against it, the
# server stopped; the generator's status in $status
run_tcp() {
  local ready=0
  tcp_args
  echo "demo: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  # emptied here, not only by the child's redirection, which may come
  # after our first look: the last try's "ready" line was taken for this one's
  : >"$slog"
  "${tpin[@]}" "$server" "${sargs[@]}" >"$slog" 2>&1 &
  spid=$!
  for _ in $(seq 200); do
    if grep -q 'ready: listening' "$slog"; then ready=1; break; fi
    if ! kill -0 "$spid" 2>/dev/null; then break; fi
    sleep 0.05
  done
  [ $ready -eq 1 ] || not_started
  echo "demo: $(grep -m1 'ready: listening' "$slog" | sed 's/^idle-server: //') [$(basename "$server")]"

  mem_start "$spid" "$LOG_DIR/memory"
  phase -v -l 0=PASS -l 1=FAIL -l 3=INVALID "run: $conns connections, $silent% silent, timeout $idle_ms ms$(
      [ -z "$rate" ] || echo ", $rate/s")$([ $try -eq 1 ] || echo ", try $try${tolerance:+, tolerance $tolerance ms}")" \
    "${gpin[@]}" "$load" "${largs[@]}" "${extra[@]}" && status=0 || status=$?
  mem_stop
  echo "demo: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "demo: $(mem_report "$total" "$LOG_DIR/memory" "$PHASE_LOG") ($LOG_DIR/memory)"

  stop_server || true
  if grep -q 'EMFILE\|ENFILE' "$slog"; then
    echo "demo: the server ran out of descriptors:"
    grep 'EMFILE\|ENFILE' "$slog" | head -5
  fi
  if grep -qv '^STATS \|ready: listening' "$slog"; then
    echo "demo: server messages:"
    grep -v '^STATS \|ready: listening' "$slog" | head -20
  fi
}

# tcp_demo: the TCP mode: build, descriptors, the runs, the verdict (exits)
tcp_demo() {
  targets=(demo/idle-load demo/idle-server-c)
  if grep -q '^demo/idle-server:' <<<"$all_targets"; then
    targets+=(demo/idle-server)
  fi
  phase "build the server and the load generator" ninja -C "$build_dir" "${targets[@]}" || exit 1
  load="$build_dir/demo/idle-load"
  case $server_kind in
    auto) if [ -x "$build_dir/demo/idle-server" ]; then server="$build_dir/demo/idle-server"
          else server="$build_dir/demo/idle-server-c"; fi ;;
    c) server="$build_dir/demo/idle-server-c" ;;
    cpp) server="$build_dir/demo/idle-server" ;;
  esac
  [ -x "$server" ] || { echo "demo: $server was not built (is liburing installed? is the C++ layer enabled?)" >&2; exit 1; }
  [ -x "$load" ] || { echo "demo: $load was not built (liburing missing?)" >&2; exit 1; }

  # 2. Descriptors: as many as we may (each program raises its own soft limit
  # too). A process holds at most RLIMIT_NOFILE sockets, so the server is
  # split into SO_REUSEPORT workers and the generator into processes when one
  # process cannot hold them all.
  total=$(( conns + abrupt ))
  ulimit -Hn $(( total + 1024 )) 2>/dev/null || true # needs CAP_SYS_RESOURCE
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  nofile=$(ulimit -n)
  [ "$nofile" = unlimited ] && nofile=1048576
  budget=$(( nofile - 256 ))
  tcp_args
  check_args "$load" "${largs[@]}" "${extra[@]}"
  if [ "$total" -gt 20000 ]; then
    large_run_setup # may lower conns and total
  fi
  if [ -z "$workers" ]; then
    # SO_REUSEPORT spreads connections by hash: leave 20% headroom per worker
    workers=$(( (total * 12 / 10 + budget - 1) / budget ))
    [ "$workers" -ge 1 ] || workers=1
  fi
  if [ "$workers" -gt 1 ]; then
    echo "demo: RLIMIT_NOFILE is $nofile and its hard limit cannot be raised here" \
      "(CAP_SYS_RESOURCE): $budget connections a process, so $workers server workers" \
      "and $(( (total + budget - 1) / budget )) generator processes for $total"
  fi

  tcp_args

  # 3. Run.
  slog=$STATE_DIR/server.log # removed by supervise

  tpin=() gpin=()
  if [ "$total" -gt 20000 ] && [ $pin -eq 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    tpin=("${prio[@]}" taskset -c 0) gpin=("${prio[@]}" taskset -c 1)
    echo "demo: the server pinned to CPU 0, the generator to CPU 1${prio:+, both at nice -19} (--no-pin: not)"
  fi
  for ((try = 1; try <= tries; try++)); do
    run_tcp
    [ $status -eq 3 ] && [ $try -lt $tries ] || break
    if [ "$conns" -gt 200000 ]; then
      echo "demo: INVALID: the generator fell behind; a run of $conns connections is not retried" \
        "(it takes minutes): run it again when the machine is quieter"
      put_back_sysctls
      phase_table
      exit 3
    fi
    slow_down
  done
  put_back_sysctls # before the table: the verdict is the last line
  phase_table
  verdict_line
  exit $status
}

# demo: the build and the runs, the worker of supervise (scripts/lib.sh):
# a process group of its own, with no trap; Ctrl-C, or SIGTERM or SIGHUP
# to this script, stops the whole group (the generator, the server, the
# memory sampler, a build) and supervise puts the kernel settings back,
# removes $STATE_DIR (the TCP server's log) and exits 130, 143 or 129.
# Until then (the options, the packages) nothing is changed, and a
# signal ends the script by its default action. The packages come first,
# in this shell: sudo may ask for a password, which the worker's process
# group, not the terminal's, could not read.
demo() {
  configure
  if [ $udp -eq 1 ]; then udp_demo; else tcp_demo; fi
}

rm -rf "$LOG_DIR"
if [ $deps -eq 1 ]; then
  phase -v "packages (scripts/deps.sh demo)" bash "$here/deps.sh" demo || exit 1
fi
supervise demo
