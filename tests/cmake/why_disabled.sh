#!/usr/bin/env bash
# tests/cmake/why_disabled.sh - configures the project with every optional
# library disabled and checks that the generated twheelConfig.cmake gives,
# as the reason a component is missing, the option that disabled it (not
# "libuv was not found"). find_package() prints that reason for a
# REQUIRED component (run_cmake_test.sh checks the printing).
#
# usage: why_disabled.sh SOURCEDIR
set -eu
src=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-why.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
meson setup "$tmp/b" "$src" -Dtests=false -Dexamples=false -Dcpp=false -During=disabled \
  -Dadapter_uv=disabled -Dadapter_ev=disabled -Dadapter_event=disabled -Dadapter_epoll=disabled \
  >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
config=$tmp/b/cmake/twheelConfig.cmake
for c in uring uv ev event epoll; do
  opt=adapter_$c
  [ "$c" = uring ] && opt=uring
  line=$(grep "set(_twheel_why_$c " "$config")
  case $line in
  *"(-D$opt=disabled)"*) ;;
  *) echo "FAIL: component $c disabled with -D$opt=disabled, but the reason given is: $line"; exit 1 ;;
  esac
done
echo "each component disabled at configure time names its option as the reason"
