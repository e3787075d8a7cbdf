# scripts/demo-mem.sh - sourced by scripts/demo.sh and scripts/demo-peers.sh:
# sample a server's memory while a run goes on, and say what one session or
# connection cost.
#
#   mem_start PID FILE   every second, append "seconds rss_kb slab_kb ctxt
#                        src" to FILE: the resident set of PID and its
#                        children (the server's own memory), the kernel's
#                        slab (slab_kb below, from the source src), and the
#                        context switches of all their threads (their
#                        wake-ups)
#   mem_stop             stop sampling
#   mem_report N FILE [LOG]  one line: peak minus first sample, each divided
#                        by the connections held at once: the held_max= of
#                        the generator's RESULT line in LOG, else N (a run
#                        paced by --rate, its timeout shorter than the
#                        opening, holds fewer than it opens: divided by N,
#                        --idle-ms 500 at 1,250 a second, 5,083 held of
#                        10,000, said 152 B where each cost about 300)
#   mem_held N LOG       the connections held at once: LOG's held_max=, else N

mem_pid=

# rss_kb PID: VmRSS of PID and of its children, KiB
rss_kb() {
  local total=0 p r
  for p in "$1" $(pgrep -P "$1" 2>/dev/null); do
    r=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null)
    total=$(( total + ${r:-0} ))
  done
  echo "$total"
}

# ctxt PID: context switches (voluntary and not) of every thread of PID and its children
ctxt() {
  local p
  for p in "$1" $(pgrep -P "$1" 2>/dev/null); do
    cat /proc/"$p"/task/*/status 2>/dev/null
  done | awk '/^(non)?voluntary_ctxt_switches:/ {n += $2} END {print n + 0}'
}

# slab_kb: "KIB s", the slab of the caches a TCP socket takes, at both
# ends and in TIME_WAIT (/proc/slabinfo, which only root may read); else
# "KIB m", the whole slab (/proc/meminfo Slab: sockets, dentries, files...
# of both ends, and whatever else the machine allocates meanwhile: a
# compiler beside the run counts too)
slab_kb() {
  awk '$1 ~ /^(TCP|TCPv6|request_sock_TCP|request_sock_TCPv6|tw_sock_TCP|tw_sock_TCPv6|sock_inode_cache)$/ {
         b += $2 * $4; n++ }
       END { if (!n) exit 1; printf "%d s\n", b / 1024 }' /proc/slabinfo 2>/dev/null ||
    awk '/^Slab:/ { print $2, "m" }' /proc/meminfo
}

mem_sample() {
  local slab
  slab=$(slab_kb)
  echo "$(date +%s.%N | cut -c1-14) $(rss_kb "$1") ${slab% *} $(ctxt "$1") ${slab#* }"
}

# The first sample is taken at once (the baseline: call it once the server
# is ready and before the load starts), the others every second.
mem_start() {
  local pid=$1 out=$2
  sleep 0.3 # a server may say it is ready just before its loop exists
  mem_sample "$pid" >"$out"
  (
    while kill -0 "$pid" 2>/dev/null; do
      sleep 1
      mem_sample "$pid"
    done
  ) >>"$out" &
  mem_pid=$!
}

mem_stop() {
  [ -n "$mem_pid" ] || return 0
  kill "$mem_pid" 2>/dev/null || true
  wait "$mem_pid" 2>/dev/null || true
  mem_pid=
}

# wakeups FILE FROM TO: context switches a second between the samples
# taken from FROM to TO (seconds, as in FILE); "-" without two samples there
wakeups() {
  awk -v a="$2" -v b="$3" '$1 >= a && $1 <= b { if (!n++) { t0 = $1; c0 = $4 } t1 = $1; c1 = $4 }
    END { if (n >= 2 && t1 > t0) printf "%.0f\n", (c1 - c0) / (t1 - t0); else print "-" }' "$1"
}

# mem_held N LOG: the connections held at once, the held_max= of the
# generator's RESULT line in LOG (idle-load's), else N
mem_held() {
  local held
  held=$(sed -n 's/^RESULT .* held_max=\([0-9]*\) .*/\1/p' "$2" 2>/dev/null | tail -1)
  if [ "${held:-0}" -gt 0 ] 2>/dev/null; then echo "$held"; else echo "$1"; fi
}

mem_report() {
  local n=$1 file=$2
  [ -z "${3:-}" ] || n=$(mem_held "$n" "$3")
  [ -s "$file" ] && [ "$n" -gt 0 ] || { echo "memory: no samples"; return 0; }
  awk -v n="$n" 'NR == 1 { r0 = $2; s0 = $3; src = $5 }
    { if ($2 > r) r = $2; if ($3 > s) s = $3 }
    END { printf "memory: server +%d KiB at peak = %.0f B a connection (its own; %d held at most); %s +%d KiB = %.0f B a connection (%s)\n",
          r - r0, (r - r0) * 1024 / n, n, src == "s" ? "kernel socket slab" : "kernel slab",
          s - s0, (s - s0) * 1024 / n, src == "s" ? "both ends" : "both ends, and all else the machine allocated meanwhile" }' "$file"
}
