#!/usr/bin/env bash
# Install the Debian packages one purpose of libtwheel needs, and nothing
# else. Idempotent: does nothing when they are all present.
#
#   scripts/deps.sh demo     build and run the idle-timeout demo (scripts/demo.sh),
#                            and plot its closes (gnuplot)
#   scripts/deps.sh test     build and run every test suite (scripts/test.sh):
#                            the demo's, plus the test frameworks, the host
#                            loops of the adapters, Boost.Asio, clang for the
#                            fuzzers, groff and CMake for the install checks,
#                            ab (apache2-utils) and curl, HTTP clients of the demo,
#                            stress-ng to load every core under the demo
#   scripts/deps.sh bench    the benchmarks against peers (tools/bench/run.sh): the
#                            test's, plus Netty and a JDK, valgrind
#   scripts/deps.sh peers    the demo beside its peers (scripts/demo-peers.sh):
#                            the demo's, plus Netty, a JDK and nginx
#   scripts/deps.sh --list PURPOSE   print the packages, install nothing
#
# Waits for another apt or dpkg to finish (up to 10 minutes, saying so)
# instead of failing on its lock. apt's output goes to a log file, named on
# failure.
set -euo pipefail

build=(meson ninja-build pkg-config gcc
       dpkg-dev) # meson asks dpkg-architecture for Debian's multiarch libdir
demo=("${build[@]}" g++ liburing-dev libsodium-dev gnuplot-nox
      procps) # pgrep, pkill: the demo scripts find and stop what they started
test=("${demo[@]}" libcmocka-dev libgtest-dev libuv1-dev libev-dev libevent-dev libboost-dev
      clang libclang-rt-dev groff-base cmake apache2-utils curl
      stress-ng
      bsdextrautils iproute2) # column and ss: tests/args runs scripts/demo-peers.sh
# the i386 headers: tests/core checks the embedded structs' layout there too
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then test+=(libc6-dev-i386); fi
bench=("${test[@]}" libnetty-java default-jdk-headless valgrind)
peers=("${demo[@]}" libnetty-java default-jdk-headless nginx-light
       bsdextrautils iproute2) # column (the summary), ss (nginx listening)

usage() { sed -n '2,21s/^# \{0,1\}//p' "$0"; }

list=0
if [ "${1:-}" = --list ]; then list=1; shift; fi
case ${1:-} in
  demo) pkgs=("${demo[@]}") ;;
  test) pkgs=("${test[@]}") ;;
  bench) pkgs=("${bench[@]}") ;;
  peers) pkgs=("${peers[@]}") ;;
  -h|--help) usage; exit 0 ;;
  *) echo "deps: which purpose? (demo, test, bench or peers)" >&2; usage >&2; exit 2 ;;
esac
purpose=$1
if [ $list -eq 1 ]; then printf '%s\n' "${pkgs[@]}"; exit 0; fi

missing=()
for p in "${pkgs[@]}"; do
  # (no "| grep -q": under pipefail its early exit can kill dpkg-query)
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] || missing+=("$p")
done
((${#missing[@]})) || exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
log=$(mktemp "${TMPDIR:-/tmp}/twheel-deps.XXXXXX.log")
locked() { grep -q 'Could not get lock\|Unable to acquire the dpkg frontend lock\|Unable to lock' "$log"; }

# apt_retry ARGS...: apt-get, waiting while another apt or dpkg holds its lock
apt_retry() {
  local waited=0
  while :; do
    if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@" \
         >>"$log" 2>&1; then
      return 0
    fi
    if ! locked || [ $waited -ge 600 ]; then
      echo "deps: apt-get $1 failed; last lines of $log:" >&2
      tail -20 "$log" >&2
      return 1
    fi
    [ $waited -eq 0 ] && echo "deps: another apt or dpkg is running; waiting for its lock (10 min at most)"
    sleep 5
    waited=$((waited + 5))
    : >"$log"
  done
}

start=$SECONDS
echo "deps ($purpose): ${#missing[@]} packages to install: ${missing[*]}"
echo "deps: apt-get update"
apt_retry update -q
echo "deps: apt-get install (output in $log)"
apt_retry install -y -q --no-install-recommends "${missing[@]}"
echo "deps: installed in $((SECONDS - start)) s"
rm -f "$log"
