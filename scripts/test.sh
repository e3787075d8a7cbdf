#!/usr/bin/env bash
# Build and run every libtwheel test suite: the README's test command and
# what CI runs. Installs missing Debian packages itself.
#
#   scripts/test.sh            everything: normal build, ASan+UBSan build
#                              (with debug_checks), TSan build (cross-thread
#                              suites), and a bounded run of each libFuzzer
#                              target (the models of the wheel, the host
#                              driver and the loop)
#   scripts/test.sh --quick    the normal build only
#
# Environment: FUZZ_SECONDS (per target, default 30), TWHEEL_MODEL_OPS (differential-test
# operations per build, default 12,000,000), BUILD_ROOT (default: build-test
# under the repository).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

bash scripts/deps.sh

root=${BUILD_ROOT:-$here/build-test}
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-30}
export TWHEEL_MODEL_OPS=${TWHEEL_MODEL_OPS:-12000000}
# allow_user_segv_handler=0: a crash is reported by ASan, not hidden by cmocka's handler
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allow_user_segv_handler=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

failed=()
step() { echo; echo "=== $* ==="; }

# setup DIR ARGS... : configure (or reconfigure) a build directory
setup() {
  local dir=$1; shift
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

run_suite() { # name dir meson-test-args...
  local name=$1 dir=$2; shift 2
  if ! meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "$@"; then
    failed+=("$name")
  fi
}

step "normal build (warnings are errors)"
setup "$root/normal" --werror -Dbuildtype=debugoptimized -Ddemo=true
ninja -C "$root/normal"
run_suite normal "$root/normal"

if [ $quick -eq 0 ]; then
  step "ASan + UBSan build with debug_checks"
  setup "$root/asan" --werror -Dbuildtype=debug -Ddebug_checks=true -Ddemo=true \
    -Db_sanitize=address,undefined -Db_lundef=false
  ninja -C "$root/asan"
  run_suite asan+ubsan "$root/asan" --timeout-multiplier 3

  step "TSan build (cross-thread suites)"
  # Only the suites that cross threads; the tools (Boost.Asio peers) are
  # left out because GCC cannot instrument atomic_thread_fence.
  setup "$root/tsan" --werror -Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false \
    -Dtools=false -Dexamples=false
  ninja -C "$root/tsan"
  run_suite tsan "$root/tsan" --suite tsan --timeout-multiplier 3

  step "libFuzzer: differential model checks, ${fuzz_seconds}s per target"
  CC=clang CXX=clang++ setup "$root/fuzz" -Dfuzz=true -Dcpp=false \
    -Dtools=false -Dexamples=false -Dbuildtype=debugoptimized
  targets=(tests/core/fuzz_model tests/core/fuzz_host)
  if ninja -C "$root/fuzz" -t targets all | grep -q '^tests/loop/fuzz_loop:'; then
    targets+=(tests/loop/fuzz_loop)
  else
    echo "no liburing: tests/loop/fuzz_loop not built"
  fi
  ninja -C "$root/fuzz" "${targets[@]}"
  for t in "${targets[@]}"; do
    name=$(basename "$t")
    mkdir -p "$root/fuzz-corpus/$name"
    if ! "$root/fuzz/$t" -max_total_time="$fuzz_seconds" -max_len=4096 \
         -print_final_stats=1 "$root/fuzz-corpus/$name" 2>"$root/$name.log"; then
      tail -40 "$root/$name.log"
      failed+=("$name")
    else
      echo "$name: $(grep -E "stat::number_of_executed_units" "$root/$name.log")"
    fi
  done
fi

echo
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "All test suites passed."
