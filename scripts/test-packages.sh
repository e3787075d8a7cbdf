#!/usr/bin/env bash
# Build the Debian packages with the standard tools (dpkg-buildpackage -b
# -us -uc on a copy of the working tree), check what each contains, and
# build against them: the README's C example with pkg-config, and the CMake
# project of tests/cmake with find_package(twheel). CI runs it after
# scripts/test.sh; it takes 30 to 80 seconds on two cores.
#
#   scripts/test-packages.sh            unpack the packages into a temporary
#                                       root (dpkg -x) and build against it
#   scripts/test-packages.sh --install  install them with apt (as root; for a
#                                       fresh Debian 12 machine) and build
#                                       against the system
#
# Installs the build dependencies of debian/control itself (apt-get
# build-dep). Environment: PKG_OUT, a directory to keep the .deb files in.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
install=0
[ "${1:-}" = --install ] && install=1
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-packages.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
version=$(sed -n '1s/.*(\(.*\)).*/\1/p' "$here/debian/changelog")
src=$tmp/libtwheel-$version
mkdir -p "$src"
(cd "$here" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -x -C "$src"

if ! (cd "$src" && dpkg-checkbuilddeps) 2>/dev/null; then
  echo "test-packages: installing the build dependencies"
  $SUDO apt-get update -qq
  (cd "$src" && DEBIAN_FRONTEND=noninteractive $SUDO apt-get build-dep -y -qq ./ >/dev/null)
fi

echo "=== dpkg-buildpackage -b -us -uc ==="
start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -b -us -uc >"$tmp/build.log" 2>&1) ||
  { tail -60 "$tmp/build.log"; exit 1; }
echo "built in $((SECONDS - start)) s:"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=()
for p in libtwheel1 libtwheel-uring1 libtwheel-uv1 libtwheel-ev1 libtwheel-event1 libtwheel-epoll1 \
  libtwheel-dev twheel-tools; do
  debs+=("$tmp/${p}_${version}_${arch}.deb")
done
ls -l "${debs[@]}" | awk '{print "  " $5 " " $NF}'
if [ -n "${PKG_OUT:-}" ]; then mkdir -p "$PKG_OUT" && cp "${debs[@]}" "$PKG_OUT"; fi

fail() { echo "FAIL: $*"; exit 1; }
# has PACKAGE PATH-REGEX...: each regex matches a path in the package
has() {
  local deb="$tmp/${1}_${version}_${arch}.deb"; shift
  local list; list=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for re in "$@"; do
    grep -Eq "^\./$re\$" <<<"$list" || fail "$(basename "$deb") has no $re"
  done
}
lib=usr/lib/$multiarch
has libtwheel1 "$lib/libtwheel\.so\.1" "$lib/libtwheel\.so\.1\.0\.0"
has libtwheel-uring1 "$lib/libtwheel-uring\.so\.1" "$lib/libtwheel-uring\.so\.1\.0\.0"
for a in uv ev event epoll; do
  has "libtwheel-${a}1" "$lib/libtwheel-$a\.so\.1" "$lib/libtwheel-$a\.so\.1\.0\.0"
done
has libtwheel-dev usr/include/twheel/twheel.h usr/include/twheel/list.h usr/include/twheel/config.h \
  usr/include/twheel/loop.h usr/include/twheel/twheel.hpp usr/include/twheel/loop.hpp usr/include/twheel/asio.hpp \
  usr/include/twheel/rt.h usr/include/twheel/host.h usr/include/twheel/uv.h usr/include/twheel/epoll.h \
  "$lib/pkgconfig/twheel-uv\.pc" "$lib/pkgconfig/twheel-epoll\.pc" \
  "$lib/libtwheel\.so" "$lib/libtwheel-uring\.so" "$lib/libtwheel\.a" \
  "$lib/pkgconfig/twheel\.pc" "$lib/pkgconfig/twheel-uring\.pc" "$lib/pkgconfig/twheel\+\+\.pc" "$lib/pkgconfig/twheel-asio\+\+\.pc" \
  "$lib/cmake/twheel/twheelConfig\.cmake" "$lib/cmake/twheel/twheelConfigVersion\.cmake" \
  usr/share/man/man3/twheel_add\.3\.gz usr/share/man/man3/twheel_loop_add_at\.3\.gz \
  usr/share/man/man7/twheel\.7\.gz usr/share/man/man7/twheel-uv\.7\.gz usr/share/man/man3/twheel_epoll_fd\.3\.gz
has twheel-tools usr/bin/twheel-inspect usr/bin/idle-server usr/bin/idle-server-c usr/bin/idle-load \
  usr/share/man/man1/idle-load\.1\.gz
for d in "${debs[@]}"; do
  echo "  $(basename "$d"): $(dpkg-deb -f "$d" Depends)"
done
echo "contents as expected"

echo "=== build against the packages ==="
if [ $install -eq 1 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${debs[@]}" >/dev/null
  root=
  export PKG_CONFIG_PATH=
  run() { "$@"; }
else
  root=$tmp/root
  for d in "${debs[@]}"; do dpkg -x "$d" "$root"; done
  export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$lib/pkgconfig:/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig
  run() { LD_LIBRARY_PATH=$root/$lib "$@"; }
fi
# The README's C example, compiled with what pkg-config says and nothing else.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/idle_timeouts" "$here/examples/idle_timeouts.c" \
  $(pkg-config --cflags --libs twheel)
run "$tmp/idle_timeouts" >"$tmp/example.out" || fail "the README example failed"
echo "README example (pkg-config twheel: $(pkg-config --libs twheel)) built and ran"
# find_package(twheel) with every imported target.
cmake -G Ninja -S "$here/tests/cmake/project" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$root/usr" \
  -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake configure"; }
cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake build"; }
for p in use_core use_loop use_cpp; do run "$tmp/cmake/$p"; done
echo "Debian packages: all checks passed."
