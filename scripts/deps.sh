#!/usr/bin/env bash
# Install the Debian packages libtwheel needs to build, test, benchmark and
# run its demo. Idempotent: does nothing when everything is present.
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc g++ clang lld
      libcmocka-dev liburing-dev libgtest-dev libgmock-dev libbenchmark-dev
      libuv1-dev libev-dev libevent-dev libboost-dev
      libnetty-java default-jdk-headless gnuplot-nox valgrind
      libclang-rt-dev groff-base cmake
      dpkg-dev)  # meson asks dpkg-architecture for Debian's multiarch libdir
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
