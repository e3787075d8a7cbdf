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
#                              wheel, the host driver and the loop)
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
# Environment: FUZZ_SECONDS (per target, default 30), TWHEEL_MODEL_OPS
# (differential-test operations per build, default 12,000,000), BUILD_ROOT
# (default: build-test under the repository).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# shellcheck source=lib.sh
. "$here/scripts/lib.sh"
quick=0
case ${1:-} in
  --quick) quick=1 ;;
  "") ;;
  -h|--help) sed -n '2,27s/^# \{0,1\}//p' "$0"; exit 0 ;;
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
# The libFuzzer targets; fuzz_loop needs liburing, required like the rest.
fuzz_targets=(tests/core/fuzz_model tests/core/fuzz_host tests/loop/fuzz_loop)

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

if ! phase -v "packages (scripts/deps.sh test)" bash scripts/deps.sh test; then
  phase_table
  exit 1
fi
# Every dependency of the tests is installed now: a test that would skip
# for a missing one (cmake, pkg-config, a docs example's library) fails.
export TWHEEL_TEST_REQUIRE_DEPS=1

# The normal build as a distribution configures it (--prefix=/usr: the
# libraries carry no RUNPATH); then the install suite at the default
# prefix (/usr/local: RUNPATH $ORIGIN, and install_system, which installs
# there for real, in a throw-away overlay, and builds with CMake from it).
# The prefix changes only what meson install writes: reconfiguring
# rebuilds nothing.
normal=(--werror -Dbuildtype=debugoptimized -Ddemo=true -Dtools=true "${required[@]}")
if build normal "$root/normal" --prefix=/usr "${normal[@]}"; then
  suites normal "$root/normal"
  if phase "normal, default prefix: configure" setup "$root/normal" --prefix=/usr/local \
       "${normal[@]}"; then
    suites "normal, default prefix" "$root/normal" --suite install
  else
    failed+=("normal, default prefix")
  fi
fi

if [ $quick -eq 0 ]; then
  if build "asan+ubsan" "$root/asan" --werror -Dbuildtype=debug -Ddebug_checks=true -Ddemo=true \
       -Db_sanitize=address,undefined -Db_lundef=false "${required[@]}"; then
    suites "asan+ubsan" "$root/asan" --timeout-multiplier 3
  fi

  # Only the suites that cross threads; the tools (Boost.Asio peers) are
  # left out because GCC cannot instrument atomic_thread_fence.
  if build tsan "$root/tsan" --werror -Dbuildtype=debugoptimized -Db_sanitize=thread \
       -Db_lundef=false -Dtools=false -Dexamples=false "${required[@]}"; then
    suites tsan "$root/tsan" --suite tsan --timeout-multiplier 3
  fi

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
  phase "LTO build of the libraries (symbol versions kept)" lto || failed+=(lto)

  # Each target by name: one the configuration lacks fails the build
  # (liburing is required). tests/docs checks that the list is complete.
  fuzz() {
    CC=clang CXX=clang++ setup "$root/fuzz" -Dfuzz=true -Dcpp=false \
      -Dtools=false -Dexamples=false -Dbuildtype=debugoptimized "${required[@]}" || return 1
    ninja -C "$root/fuzz" "${fuzz_targets[@]}"
  }
  if phase "libFuzzer targets: build (clang)" fuzz; then
    for t in "${fuzz_targets[@]}"; do
      name=$(basename "$t")
      mkdir -p "$root/fuzz-corpus/$name"
      if phase "libFuzzer: $name, ${fuzz_seconds} s" "$root/fuzz/$t" \
           -max_total_time="$fuzz_seconds" -max_len=4096 -print_final_stats=1 \
           "$root/fuzz-corpus/$name"; then
        phase_note "$(grep -E 'stat::number_of_executed_units' "$PHASE_LOG")"
      else
        failed+=("$name")
      fi
    done
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
