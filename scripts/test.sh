#!/usr/bin/env bash
# Build and run every libtwheel test suite: the README's test command and
# what CI runs. Installs the Debian packages the tests need itself
# (scripts/deps.sh test).
#
#   scripts/test.sh            everything: normal build (--prefix=/usr, as
#                              a distribution configures it; then its install
#                              suites again at the default prefix), ASan+UBSan
#                              build (with debug_checks), TSan build
#                              (cross-thread suites), LTO build, and a bounded
#                              run of each libFuzzer target (the models of the
#                              wheel, the host driver and the loop; the demo
#                              servers' HTTP, line and UDP parsers)
#   scripts/test.sh --quick    the normal build only
#
# Every optional part is required (-Dauto_features=enabled: the loop and
# the adapters, whose libraries it installs first; TWHEEL_TEST_REQUIRE_DEPS=1
# for the tests that look for cmake and pkg-config), so that a missing one
# fails instead of leaving its suites out. Each phase prints its name,
# then "ok" or "FAILED" with its time, and under a test phase each test
# meson skipped with the first line it printed; the output of the builds
# and suites goes to one log file per phase under BUILD_ROOT/logs (named
# when a phase fails), and a table of the phases and their times ends the
# run.
#
# Where the time goes, and what overlaps: the suites of the normal and
# the ASan+UBSan builds take most of it, and they mostly wait on timers
# and sockets (the demo's tests that load the machine, and a few others,
# run one at a time, at the end of each build's suites: about half a
# core of two). So once the normal build is compiled, the other builds
# compile behind its suites, in the background at idle CPU priority
# (SCHED_IDLE, else nice 19: a test that wants the CPU gets it first):
# ASan+UBSan, then the libFuzzer targets, the TSan build's programs, the
# LTO build. Their phases below wait for each ("compile (background)":
# the wait, with the compile's own time under it; the log is the
# compile's), the chain at normal priority while a phase waits for it.
# The TSan build compiles only the programs of its suites (the tsan
# suite: what crosses threads; the rest of that build was never run).
# The libFuzzer targets, compiled second in the chain, start at once, all
# six, at idle priority in the chain (the suites' tests get the CPU
# first; they leave much of it unused), and run until their phase at the
# end, each for FUZZ_SECONDS of CPU time at least, as on a core of its own
# (then SIGINT: it prints its final stats; 20 x FUZZ_SECONDS of wall time
# at most): that phase lets each stop once it has had that much, waiting
# (at normal priority) for those that have not, and notes each one's
# executions and CPU time.
#
# Ctrl-C, SIGTERM (a CI's timeout) or SIGHUP stops all it started, the
# background chain and the fuzzers with the rest, and it exits 130, 143
# or 129 at once, with no table (scripts/lib.sh: supervise).
#
# Environment: FUZZ_SECONDS (CPU seconds per target, default 30), TWHEEL_MODEL_OPS
# (differential-test operations per build, default 12,000,000; core_model
# runs a third under the sanitizers: tests/core/meson.build),
# TWHEEL_MODEL_SEED (added to the seeds of the differential tests, to run
# them over other sequences; default 0), BUILD_ROOT (default: build-test
# under the repository).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# shellcheck source=lib.sh
. "$here/scripts/lib.sh"
quick=0
case ${1:-} in
  --quick) quick=1 ;;
  "") ;;
  -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "test.sh: unknown option $1 (--quick, --help)" >&2; exit 2 ;;
esac

root=${BUILD_ROOT:-$here/build-test}
LOG_DIR=$root/logs
rm -rf "$LOG_DIR"
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-30}
export TWHEEL_MODEL_OPS=${TWHEEL_MODEL_OPS:-12000000}
# allow_user_segv_handler=0: a crash is reported by ASan, not hidden by cmocka's handler
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allow_user_segv_handler=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

failed=()
# The builds require each optional part: its libraries are installed
# below (scripts/deps.sh test), so one not found is a failure, not a skip.
required=(-Dauto_features=enabled)
# The libFuzzer targets; fuzz_loop and fuzz_udp need liburing, required
# like the rest. The demo's (tests/demo) start from seeds/ there; the
# text protocols' (http, line) use dicts/ there too (libFuzzer -dict=).
fuzz_targets=(tests/core/fuzz_model tests/core/fuzz_host tests/loop/fuzz_loop
              tests/demo/fuzz_http tests/demo/fuzz_line tests/demo/fuzz_udp)

# setup DIR ARGS... : configure (or reconfigure) a build directory
setup() {
  local dir=$1
  shift
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" "$@"
  else
    meson setup "$dir" "$@"
  fi
}

# skipped DIR: each test the last meson test in DIR skipped, with the
# first line it printed (its reason)
skipped() {
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t["result"] == "SKIP":
        why = (t.get("stdout") or "").strip().split("\n")[0] or "(no reason printed)"
        print("skipped " + t["name"] + ": " + why)' \
    "$1/meson-logs/testlog.json"
}

# suites NAME DIR meson-test-args...: run them; one line of counts, and a
# line per skipped test
suites() {
  local name=$1 dir=$2 line
  shift 2
  if phase "$name: test suites" meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "$@"; then
    phase_note "$(grep -E '^(Ok|Skipped|Fail|Timeout): ' "$PHASE_LOG" | tr -s ' ' | paste -sd ' ')"
    while IFS= read -r line; do phase_note "$line"; done < <(skipped "$dir")
  else
    failed+=("$name")
  fi
}

# build NAME DIR MESON-ARGS...: configure, compile, or record the failure
build() {
  local name=$1 dir=$2
  shift 2
  phase "$name: configure" setup "$dir" "$@" &&
    phase "$name: compile" ninja -C "$dir" ||
    { failed+=("$name"); return 1; }
}

# The builds after the normal one (full run only): each configured in
# the foreground, compiled in the background chain (see the head of this
# file) while the normal suites run.
asan=(--werror -Dbuildtype=debug -Ddebug_checks=true -Ddemo=true
      "-Db_sanitize=address,undefined" -Db_lundef=false "${required[@]}")
# The tools (Boost.Asio peers) are left out because GCC cannot instrument
# atomic_thread_fence.
tsan=(--werror -Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false
      -Dtools=false -Dexamples=false "${required[@]}")

# suite_programs DIR SUITE: the ninja targets the tests of SUITE run
suite_programs() {
  meson introspect "$1" --tests --targets | python3 -c '
import json, os, sys
info, suite = json.load(sys.stdin), "libtwheel:" + sys.argv[2]
files = {t["id"]: t["filename"] for t in info["targets"]}
wanted = {d for t in info["tests"] if suite in t["suite"] for d in t["depends"]}
for d in sorted(wanted):
    for f in files[d]:
        print(os.path.relpath(f, sys.argv[1]))' "$(cd "$1" && pwd)" "$2"
}

# Only the programs of the suites that cross threads: the TSan build runs
# nothing else.
tsan_programs() {
  local programs
  programs=$(suite_programs "$root/tsan" tsan) && [ -n "$programs" ] || return 1
  # shellcheck disable=SC2086
  ninja -C "$root/tsan" $programs
}

# The libraries with link-time optimisation, as distributions build
# them: a version script and symver attributes must survive it.
lto() {
  setup "$root/lto" -Db_lto=true -Dtests=false -Dcpp=false -Dexamples=false \
    -Dbuildtype=release "${required[@]}" || return 1
  ninja -C "$root/lto" || return 1
  local so=("$root"/lto/libtwheel/uring/libtwheel-uring.so.*.*.*)
  [ -f "${so[0]}" ] || { echo "no libtwheel-uring.so.X.Y.Z in $root/lto"; return 1; }
  objdump -T "${so[0]}" | grep -E 'TWHEEL_URING_1\.0\) +twheel_loop_get_stats$' &&
    objdump -T "${so[0]}" | grep -E ' TWHEEL_URING_1\.1 +twheel_loop_get_stats$'
}

# Each target by name: one the configuration lacks fails the build
# (liburing is required). tests/docs checks that the list is complete.
fuzz_build() {
  CC=clang CXX=clang++ setup "$root/fuzz" -Dfuzz=true -Dcpp=false \
    -Dtools=false -Dexamples=false -Dbuildtype=debugoptimized "${required[@]}" || return 1
  ninja -C "$root/fuzz" "${fuzz_targets[@]}"
}

# The background chain: each step's output in $bg/NAME.log, then its exit
# status and seconds in $bg/NAME.done; await NAME (a phase) waits for it.
bg=$root/background
later() {
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" >"$bg/$name.log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - start))" >"$bg/$name.done"
}
await() {
  local rc secs
  if [ ! -f "$bg/$1.done" ]; then
    chain_priority normal
    while [ ! -f "$bg/$1.done" ]; do sleep 1; done
    chain_priority idle
  fi
  cat "$bg/$1.log"
  read -r rc secs <"$bg/$1.done"
  return "$rc"
}
# await_note NAME: a line under the phase, the step's own time
await_note() {
  local rc secs
  read -r rc secs <"$bg/$1.done"
  phase_note "compiled in $secs s in the background"
}
# chain_priority normal|idle: the chain's processes at this script's
# priority while a phase waits for it (at idle priority it would starve on
# a busy machine), back at idle priority after (a test that wants the CPU
# gets it first). Leaving SCHED_IDLE or nice 19 takes CAP_SYS_NICE (root,
# as in CI); without it the chain stays idle, which costs nothing where
# nothing else runs. Its processes share the process group of the rest
# of the run (which supervise stops whole): they are the chain's shell,
# its subshells (its children) and the programs they run, found by the
# variable TWHEEL_TEST_CHAIN in the environment they started with (the
# chain exports it).
chain_priority() {
  local pid
  for _ in 1 2; do # twice: for a process forked meanwhile
    for pid in "$bg_pid" $(pgrep -P "$bg_pid") \
      $(grep -lsz "^TWHEEL_TEST_CHAIN=$bg_pid\$" /proc/[0-9]*/environ); do
      pid=${pid#/proc/}
      pid=${pid%/environ}
      if [ "$1" = normal ]; then
        chrt --other -p 0 "$pid" >/dev/null 2>&1
        renice -n "$(nice)" -p "$pid" >/dev/null 2>&1
      else
        chrt --idle -p 0 "$pid" >/dev/null 2>&1 || renice -n 19 -p "$pid" >/dev/null 2>&1
      fi
    done
  done
  return 0
}
# The chain, and the fuzzers it starts, are stopped with the rest of
# the run when it ends, whichever way (supervise, below).
background() {
  rm -rf "$bg"
  mkdir -p "$bg"
  (
    export TWHEEL_TEST_CHAIN=$BASHPID # chain_priority finds its processes by it
    chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null
    later asan ninja -C "$root/asan"
    later fuzz fuzz_build
    if fuzz_ready; then
      for t in "${fuzz_targets[@]}"; do fuzz_run "$fuzz_seconds" "$t" & done
    fi
    later tsan tsan_programs
    later lto lto
  ) &
  bg_pid=$!
}

# fuzz_run SECONDS TARGET: TARGET (at the caller's priority) until it has
# had SECONDS of CPU time and $bg/fuzz.stop exists (fuzz_wait), then
# SIGINT (libFuzzer prints its final stats and exits 72), or for
# 20 x SECONDS of wall time at most; its output in
# $LOG_DIR/fuzz-NAME.log, its status in $LOG_DIR/fuzz-NAME.rc (0 when it
# ran its time or was stopped at its CPU time) and its CPU seconds in
# $LOG_DIR/fuzz-NAME.cpu. The CPU time is the process's (all threads),
# from /proc/PID/stat (utime + stime).
fuzz_cpu_ticks() {
  local s f
  { read -r s <"/proc/$1/stat"; } 2>/dev/null || { echo 0; return; }
  read -ra f <<<"${s##*) }" # from the third field: state
  echo $((f[11] + f[12]))
}
fuzz_run() {
  local secs=$1 t=$2 name pid rc=0 hz ticks=0 now seeds=() dict=() dir
  name=$(basename "$t")
  dir=$here/$(dirname "$t")
  mkdir -p "$root/fuzz-corpus/$name"
  # its seeds, read (new inputs go to the first directory, the corpus)
  [ -d "$dir/seeds/${name#fuzz_}" ] && seeds=("$dir/seeds/${name#fuzz_}")
  # its protocol's tokens, which mutations insert (the text protocols')
  [ -f "$dir/dicts/${name#fuzz_}.dict" ] && dict=("-dict=$dir/dicts/${name#fuzz_}.dict")
  hz=$(getconf CLK_TCK)
  "$root/fuzz/$t" -max_total_time=$((20 * secs)) -max_len=4096 -print_final_stats=1 "${dict[@]}" \
    "$root/fuzz-corpus/$name" "${seeds[@]}" >"$LOG_DIR/fuzz-$name.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    # the largest reading: one taken as it exits (a zombie's) reads 0
    now=$(fuzz_cpu_ticks "$pid")
    [ "$now" -gt "$ticks" ] && ticks=$now
    if [ "$ticks" -ge $((secs * hz)) ] && [ -f "$bg/fuzz.stop" ]; then
      kill -INT "$pid" 2>/dev/null
      break
    fi
  done
  wait "$pid" || rc=$?
  # stopped at its CPU time: not a failure
  [ $rc -eq 72 ] && grep -q 'libFuzzer: run interrupted' "$LOG_DIR/fuzz-$name.log" && rc=0
  echo $((ticks / hz)) >"$LOG_DIR/fuzz-$name.cpu"
  echo $rc >"$LOG_DIR/fuzz-$name.rc"
}
# fuzz_ready: the libFuzzer targets are compiled (their background step
# ended well)
fuzz_ready() {
  local rc=1
  [ -f "$bg/fuzz.done" ] && read -r rc _ <"$bg/fuzz.done"
  [ "$rc" = 0 ]
}
# fuzz_notes TARGET...: each one's executions and CPU time under the
# current phase, or its name in failed
fuzz_notes() {
  local t name
  for t; do
    name=$(basename "$t")
    if [ "$(cat "$LOG_DIR/fuzz-$name.rc")" = 0 ]; then
      local cpu short=""
      cpu=$(cat "$LOG_DIR/fuzz-$name.cpu")
      # the machine was too busy to give it its CPU time within the cap
      [ "$cpu" -lt "$fuzz_seconds" ] &&
        short=" (its wall-time cap came first: fewer than $fuzz_seconds s of CPU)"
      phase_note "$name: $(grep -E 'stat::number_of_executed_units' "$LOG_DIR/fuzz-$name.log")," \
        "$cpu s of CPU$short"
    else
      failed+=("$name")
    fi
  done
}
# fuzz_wait TARGET...: let each stop once it has had its CPU time, wait
# for each (the chain, and so the fuzzers, at normal priority meanwhile)
# and say which failed
fuzz_wait() {
  local t name rc=0
  touch "$bg/fuzz.stop"
  chain_priority normal
  for t; do
    name=$(basename "$t")
    while [ ! -f "$LOG_DIR/fuzz-$name.rc" ]; do sleep 1; done
  done
  chain_priority idle
  for t; do
    name=$(basename "$t")
    [ "$(cat "$LOG_DIR/fuzz-$name.rc")" = 0 ] && continue
    rc=1
    echo "---- $name failed; last lines of $LOG_DIR/fuzz-$name.log ----"
    tail -40 "$LOG_DIR/fuzz-$name.log"
  done
  return $rc
}

# The normal build as a distribution configures it (--prefix=/usr: the
# libraries carry no RUNPATH); then the install suite at the default
# prefix (/usr/local: RUNPATH $ORIGIN, and install_system, which installs
# there for real, in a throw-away overlay, and builds with CMake from it).
# The prefix changes only what meson install writes: reconfiguring
# rebuilds nothing.
normal=(--werror -Dbuildtype=debugoptimized -Ddemo=true -Dtools=true "${required[@]}")

# run_tests: the builds and suites, the worker of supervise (scripts/lib.sh):
# a process group of its own, with no trap; Ctrl-C, or SIGTERM or SIGHUP
# to this script, stops the whole group (ninja and its compilers, meson
# test, which stops its tests, the background chain and the fuzzers) and
# the script exits 130, 143 or 129 at once, printing nothing more. A
# build or a meson test that caught the signal would otherwise have
# ended in a failure of its phase, and the script gone on with the next.
run_tests() {
  normal_built=0 asan_ok=0 tsan_ok=0
  build normal "$root/normal" --prefix=/usr "${normal[@]}" && normal_built=1

  if [ $quick -eq 0 ]; then
    phase "asan+ubsan: configure" setup "$root/asan" "${asan[@]}" && asan_ok=1 || failed+=("asan+ubsan")
    phase "tsan: configure" setup "$root/tsan" "${tsan[@]}" && tsan_ok=1 || failed+=(tsan)
    background
  fi

  if [ $normal_built -eq 1 ]; then
    suites normal "$root/normal"
    # Compiled again before the suite: the new prefix pads the programs'
    # build rpaths for their install rpath (a relink), and meson test
    # rebuilds only what the suite's tests name, not what they install.
    build "normal, default prefix" "$root/normal" --prefix=/usr/local "${normal[@]}" &&
      suites "normal, default prefix" "$root/normal" --suite install
  fi

  if [ $quick -eq 0 ]; then
    if [ $asan_ok -eq 1 ]; then
      if phase "asan+ubsan: compile (background)" await asan; then
        await_note asan
        suites "asan+ubsan" "$root/asan" --timeout-multiplier 3
      else
        failed+=("asan+ubsan")
      fi
    fi

    # Only the suites that cross threads.
    if [ $tsan_ok -eq 1 ]; then
      if phase "tsan: compile its suites' programs (background)" await tsan; then
        await_note tsan
        suites tsan "$root/tsan" --suite tsan --timeout-multiplier 3
      else
        failed+=(tsan)
      fi
    fi

    phase "LTO build of the libraries, symbol versions kept (background)" await lto || failed+=(lto)

    if phase "libFuzzer targets: build, clang (background)" await fuzz; then
      await_note fuzz
      names=$(for t in "${fuzz_targets[@]}"; do basename "$t"; done | paste -sd ' ')
      phase "libFuzzer: ${names// / + }, from their build on at idle priority, ${fuzz_seconds} s of CPU each at least" \
        fuzz_wait "${fuzz_targets[@]}" || true
      fuzz_notes "${fuzz_targets[@]}"
    else
      failed+=(fuzz-build)
    fi
  fi

  phase_table
  echo
  if ((${#failed[@]})); then
    echo "FAILED: ${failed[*]}"
    exit 1
  fi
  echo "All test suites passed."
}

# The packages first, in this shell: sudo may ask for a password, which
# the worker's process group, not the terminal's, could not read.
if ! phase -v "packages (scripts/deps.sh test)" bash scripts/deps.sh test; then
  phase_table
  exit 1
fi
# Every dependency of the tests is installed now: a test that would skip
# for a missing one (cmake, pkg-config, a docs example's library) fails.
export TWHEEL_TEST_REQUIRE_DEPS=1
supervise run_tests
