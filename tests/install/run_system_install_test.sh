#!/usr/bin/env bash
# tests/install/run_system_install_test.sh - the first steps of a new user,
# for real: `meson install` as root into /usr/local (no DESTDIR), then a
# program built with pkg-config and one built with CMake
# (find_package(twheel COMPONENTS <adapter>)) run with no LD_LIBRARY_PATH
# and no rpath: the install script must have run ldconfig.
#
# It must not touch the machine: it runs in a private mount namespace
# (unshare -m) where /usr/local and /etc are overlays whose writes go to a
# temporary directory (/etc for ld.so.cache), gone when the test ends.
#
# usage: run_system_install_test.sh BUILDDIR SRCDIR PREFIX [ADAPTER...]
# Exit 0 pass, 1 fail, 77 skip (not root, prefix not /usr/local, no
# unshare or overlay mounts here).
set -eu
build=$1 src=$2 prefix=$3
shift 3
adapters=("$@")

if [ -z "${TWHEEL_IN_NAMESPACE:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (an install without DESTDIR)"; exit 77; }
	[ "$prefix" = /usr/local ] || { echo "SKIP: prefix $prefix is not /usr/local"; exit 77; }
	command -v unshare >/dev/null && unshare -m true 2>/dev/null ||
		{ echo "SKIP: no mount namespace here (unshare -m)"; exit 77; }
	[ -d /usr/local ] || { echo "SKIP: no /usr/local to overlay"; exit 77; }
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-sysinstall-test.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	rc=0
	TWHEEL_IN_NAMESPACE=$tmp unshare -m --propagation private "$0" "$build" "$src" "$prefix" \
		"${adapters[@]}" || rc=$?
	exit $rc
fi

# In the namespace.
tmp=$TWHEEL_IN_NAMESPACE
unset TWHEEL_IN_NAMESPACE LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR DESTDIR
overlay() { # DIR NAME: writes to DIR go to $tmp/NAME
	mkdir -p "$tmp/$2/upper" "$tmp/$2/work"
	mount -t overlay overlay \
		-o "lowerdir=$1,upperdir=$tmp/$2/upper,workdir=$tmp/$2/work" "$1" 2>/dev/null
}
overlay /usr/local usrlocal && overlay /etc etc ||
	{ echo "SKIP: no overlay mounts here"; exit 77; }

fail() { echo "FAIL: $*"; exit 1; }
meson install -C "$build" --no-rebuild >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "meson install"; }
ldconfig -p | grep -q 'libtwheel\.so\.1 ' ||
	{ cat "$tmp/install.log"; fail "meson install did not run ldconfig: libtwheel.so.1 is not in the linker's cache"; }

# As docs/install.md says: pkg-config, nothing else.
# shellcheck disable=SC2046
cc -o "$tmp/idle_timeouts" "$src/examples/idle_timeouts.c" $(pkg-config --cflags --libs twheel) ||
	fail "cc ... \$(pkg-config --cflags --libs twheel)"
"$tmp/idle_timeouts" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "idle_timeouts"; }
echo "meson install to $prefix ran ldconfig; a program built with pkg-config runs"

# And CMake with an adapter component, found in /usr/local by default;
# no RUNPATH either, so that the cache is what finds the libraries.
[ ${#adapters[@]} -gt 0 ] || exit 0
command -v cmake >/dev/null || { echo "no cmake: CMake part not run"; exit 0; }
a=${adapters[0]}
mkdir -p "$tmp/proj"
cat >"$tmp/proj/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(twheel_user C)
find_package(twheel 1.0 REQUIRED COMPONENTS $a)
add_executable(${a}_example "$src/examples/event-loops/${a}_example.c")
target_link_libraries(${a}_example PRIVATE twheel::twheel-$a)
EOF
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_SKIP_RPATH=ON >"$tmp/cmake.log" 2>&1 &&
	cmake --build "$tmp/proj/build" >>"$tmp/cmake.log" 2>&1 ||
	{ cat "$tmp/cmake.log"; fail "CMake project with find_package(twheel COMPONENTS $a)"; }
"$tmp/proj/build/${a}_example" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "${a}_example"; }
echo "find_package(twheel COMPONENTS $a) from $prefix: built and ran"
