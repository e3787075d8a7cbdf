#!/usr/bin/env bash
# tests/cmake/run_cmake_test.sh - stage `meson install --destdir` of the
# build, then configure, build and run a small CMake project (project/)
# that finds it with find_package(twheel) and links each imported target.
#
# usage: run_cmake_test.sh BUILDDIR PREFIX
# Exit 0 pass, 1 fail, 77 skip (no cmake).
set -eu
build=$1 prefix=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v cmake >/dev/null || { echo "SKIP: cmake is not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-cmake-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/stage"
cmake -G Ninja -S "$here/project" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/stage$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
# The staged libraries are not on the loader's path (CMake's RUNPATH covers
# the programs' direct dependencies only, not libtwheel-uring's own).
libdir=$(dirname "$(find "$tmp/stage" -name 'libtwheel.so.*' | head -1)")
for p in use_core use_loop use_cpp; do
  LD_LIBRARY_PATH=$libdir "$tmp/build/$p"
done
echo "find_package(twheel) against the staged install: all targets built and ran"
