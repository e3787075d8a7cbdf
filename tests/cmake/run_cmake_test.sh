#!/usr/bin/env bash
# tests/cmake/run_cmake_test.sh - stage `meson install --destdir` of the
# build, then configure, build and run a small CMake project (project/)
# that finds it with find_package(twheel) and links each imported target:
# the core, the loop, the C++ layer, and each adapter component named
# (uv ev event epoll asio: the examples of docs/event-loops.md). Then
# checks that a required component that is missing fails find_package()
# with a message naming it, and that asio is missing with a Boost older
# than <twheel/asio.hpp> needs.
#
# usage: run_cmake_test.sh BUILDDIR PREFIX EXAMPLESDIR [COMPONENT...]
# Exit 0 pass, 1 fail, 77 skip (no cmake; a failure with
# TWHEEL_TEST_REQUIRE_DEPS=1, which scripts/test.sh sets: it installs cmake).
set -eu
build=$1 prefix=$2 examples=$3
shift 3
comps="$*"
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v cmake >/dev/null; then
	[ -z "${TWHEEL_TEST_REQUIRE_DEPS:-}" ] || { echo "FAIL: cmake is not installed"; exit 1; }
	echo "SKIP: cmake is not installed"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-cmake-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Staged as a -dev package is split: the runtime and devel install tags.
meson install -C "$build" --no-rebuild --quiet --tags runtime,devel --destdir "$tmp/stage"
# The package's set-up block once, where the template puts it (meson's
# cmake module expanded @PACKAGE_INIT@ in a comment that named it too).
config=$(find "$tmp/stage" -name twheelConfig.cmake)
[ -n "$config" ] || { echo "FAIL: no twheelConfig.cmake in the runtime and devel install tags"; exit 1; }
n=$(grep -c 'get_filename_component(PACKAGE_PREFIX_DIR' "$config" || true)
[ "$n" = 1 ] || { echo "FAIL: $config sets PACKAGE_PREFIX_DIR $n times"; exit 1; }
cmake -G Ninja -S "$here/project" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/stage$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_COMPILE_WARNING_AS_ERROR=ON \
  -DTWHEEL_COMPONENTS="${comps// /;}" -DTWHEEL_EXAMPLES_DIR="$examples" \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
# The staged libraries are not on the loader's path (CMake's RUNPATH covers
# the programs' direct dependencies only, not libtwheel-uring's own).
libdir=$(dirname "$(find "$tmp/stage" -name 'libtwheel.so.*' | head -1)")
for p in use_core use_loop use_cpp $(printf 'use_%s ' $comps); do
  LD_LIBRARY_PATH=$libdir "$tmp/build/$p" >"$tmp/run.log" 2>&1 ||
    { echo "FAIL: $p"; cat "$tmp/run.log"; exit 1; }
done
echo "find_package(twheel COMPONENTS uring cpp $comps) against the staged install: all targets built and ran"

# The version file: any 1.x up to this one, not 2.
mkdir -p "$tmp/ver"
for v in 1.0 '1.0...<2' 1.3 2.0 '2.0...3'; do
  printf 'cmake_minimum_required(VERSION 3.19)\nproject(v C)\nfind_package(twheel %s REQUIRED)\n' "$v" \
    >"$tmp/ver/CMakeLists.txt"
  rc=0
  cmake -S "$tmp/ver" -B "$tmp/ver/b" -Dtwheel_DIR="$(dirname "$config")" >"$tmp/ver.log" 2>&1 || rc=$?
  case $v in 2*) want=1 ;; *) want=0 ;; esac
  [ $((rc != 0)) -eq $want ] || { cat "$tmp/ver.log"; echo "FAIL: find_package(twheel $v) exit $rc"; exit 1; }
done
echo "find_package(twheel 1.0), (1.0...<2) and (1.3) take this version; (2.0) and (2.0...3) do not"

# A required component that is missing fails, naming it. In the same run,
# asio where the only Boost is 1.73 (a BoostConfig.cmake with nothing
# else; the system's prefixes are ignored): <twheel/asio.hpp> needs 1.74
# (any_io_executor), so asio is missing too, and says why.
oldboost=$tmp/oldboost/lib/cmake/Boost-1.73.0
mkdir -p "$oldboost"
echo 'add_library(Boost::headers INTERFACE IMPORTED)' >"$oldboost/BoostConfig.cmake"
printf '%s\n' 'set(PACKAGE_VERSION 1.73.0)' \
  'if(PACKAGE_FIND_VERSION VERSION_LESS_EQUAL PACKAGE_VERSION)' \
  '  set(PACKAGE_VERSION_COMPATIBLE TRUE)' 'endif()' >"$oldboost/BoostConfigVersion.cmake"
if cmake -G Ninja -S "$here/project" -B "$tmp/missing" \
     -DCMAKE_PREFIX_PATH="$tmp/stage$prefix;$tmp/oldboost" -DCMAKE_IGNORE_PREFIX_PATH="/usr;/" \
     -DTWHEEL_COMPONENTS="no_such_component;asio" >"$tmp/missing.log" 2>&1; then
  echo "FAIL: find_package(twheel REQUIRED COMPONENTS no_such_component) succeeded"
  exit 1
fi
grep -q 'no_such_component: no such component' "$tmp/missing.log" ||
  { echo "FAIL: no message naming the missing component:"; cat "$tmp/missing.log"; exit 1; }
grep -q 'asio: Boost 1.74 or later' "$tmp/missing.log" ||
  { echo "FAIL: component asio found with Boost 1.73 (<twheel/asio.hpp> needs 1.74):"
    cat "$tmp/missing.log"; exit 1; }
echo "a missing required component fails find_package(twheel) and is named; Boost 1.73 is not enough for asio"
