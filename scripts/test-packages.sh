#!/usr/bin/env bash
# Build the Debian packages with the standard tools (dpkg-buildpackage -b
# -us -uc on a copy of the working tree), check what each contains and that
# libtwheel-dev declares the packages its headers and .pc files need, and
# build against them: the README's C example with pkg-config, and the CMake
# project of tests/cmake with find_package(twheel). CI runs it after
# scripts/test.sh.
#
#   scripts/test-packages.sh            unpack the packages into a temporary
#                                       root (dpkg -x) and build against it
#   scripts/test-packages.sh --install  install them with apt (as root; for a
#                                       fresh Debian 12 machine) and build
#                                       against the system
#
# The .deb files are kept in build-packages/ at the repository root (or
# PKG_OUT). Installs the build dependencies of debian/control itself
# (apt-get build-dep). Each phase prints its name and time; the output of
# the package build goes to build-packages/logs (named if a phase fails).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$here/scripts/lib.sh"
install=0
case ${1:-} in
  --install) install=1 ;;
  "") ;;
  -h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "test-packages.sh: unknown option $1 (--install, --help)" >&2; exit 2 ;;
esac
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
out=${PKG_OUT:-$here/build-packages}
LOG_DIR=$out/logs
rm -rf "$LOG_DIR"
mkdir -p "$out"

version=$(sed -n '1s/.*(\(.*\)).*/\1/p' "$here/debian/changelog")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# (the packages' names, in $out once built)
debs=()
for p in libtwheel1 libtwheel-uring1 libtwheel-uv1 libtwheel-ev1 libtwheel-event1 libtwheel-epoll1 \
  libtwheel-dev twheel-tools; do
  debs+=("$out/${p}_${version}_${arch}.deb")
done

fail() { echo "FAIL: $*"; exit 1; }
lib=usr/lib/$multiarch

# Each check runs in a subshell of its own: fail ends the check, the
# phase reports it. (set -e does not hold inside "phase ... || exit": every
# step that can fail says so with fail.)
check_contents() (
  set -e
  # has PACKAGE PATH-REGEX...: each regex matches a path in the package
  has() {
    local deb="$out/${1}_${version}_${arch}.deb"; shift
    local list; list=$(dpkg-deb -c "$deb" | awk '{print $6}')
    for re in "$@"; do
      grep -Eq "^\./$re\$" <<<"$list" || fail "$(basename "$deb") has no $re"
    done
  }
  v=${version//./\\.}
  has libtwheel1 "$lib/libtwheel\.so\.1" "$lib/libtwheel\.so\.$v"
  has libtwheel-uring1 "$lib/libtwheel-uring\.so\.1" "$lib/libtwheel-uring\.so\.$v"
  for a in uv ev event epoll; do
    has "libtwheel-${a}1" "$lib/libtwheel-$a\.so\.1" "$lib/libtwheel-$a\.so\.$v"
  done
  has libtwheel-dev usr/include/twheel/twheel.h usr/include/twheel/list.h usr/include/twheel/config.h \
    usr/include/twheel/loop.h usr/include/twheel/fn.hpp usr/include/twheel/timer.hpp usr/include/twheel/twheel.hpp usr/include/twheel/loop.hpp usr/include/twheel/asio.hpp usr/include/twheel/co.hpp \
    usr/include/twheel/compat.h usr/include/twheel/compat/timer_list.h usr/include/twheel/compat/callout.h \
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
)

# What libtwheel-dev's headers and .pc files need from other packages, it
# declares: every file its headers include (the compiler's -M, each header
# alone) and every pkg-config module its .pc files require belongs to the
# toolchain (libc6-dev, linux-libc-dev, libgcc-N-dev, libstdc++-N-dev), to a
# package of its Depends or Suggests, or to one that such a package depends
# on (libboost-dev: libboost1.74-dev). Read from the host's own packages,
# which provide those files here.
check_dev_deps() (
  set -e
  dev=$out/libtwheel-dev_${version}_${arch}.deb
  root=$tmp/dev
  dpkg -x "$dev" "$root" || fail "dpkg -x $dev"
  declared=$(dpkg-deb -f "$dev" Depends Suggests | sed 's/^[A-Za-z-]*://; s/([^)]*)//g' | tr ',|' '\n' |
    tr -d ' ' | grep -v '^$' | sort -u)
  allowed=$declared
  for p in $declared; do
    deps=$(dpkg-query -W -f='${Depends}' "$p" 2>/dev/null || true)
    allowed+=$'\n'$(sed 's/([^)]*)//g; s/:[a-z0-9]*//g' <<<"$deps" | tr ',|' '\n' | tr -d ' ')
  done
  : >"$tmp/dev-files"
  for h in $(cd "$root/usr/include" && ls twheel/*.h twheel/compat/*.h twheel/*.hpp); do
    if [ "$h" = twheel/asio.hpp ] && [ ! -e /usr/include/boost/asio.hpp ]; then
      echo "  no Boost.Asio here: <$h> not checked"
      continue
    fi
    case $h in
    *.hpp) comp=(c++ -x c++ -std=c++20) ;;
    *) comp=(cc -x c -std=gnu11) ;;
    esac
    echo "#include <$h>" | "${comp[@]}" -M -I"$root/usr/include" - >>"$tmp/dev-files" ||
      fail "<$h> of libtwheel-dev does not preprocess"
  done
  tr ' \\' '\n\n' <"$tmp/dev-files" | grep '^/' | grep -v "^$root/" | sort -u >"$tmp/dev-needs"
  pcs=$(cd "$root/$lib/pkgconfig" && ls -- *.pc | sed 's/\.pc$//')
  for m in $(PKG_CONFIG_PATH=$root/$lib/pkgconfig pkg-config --print-requires --print-requires-private $pcs |
    awk '{print $1}' | sort -u); do
    grep -qx -- "$m" <<<"$pcs" && continue
    PKG_CONFIG_PATH=$root/$lib/pkgconfig pkg-config --path "$m" >>"$tmp/dev-needs" ||
      fail "pkg-config module $m, required by libtwheel-dev, is not installed here"
  done
  xargs dpkg -S <"$tmp/dev-needs" 2>/dev/null | grep -v '^diversion ' >"$tmp/dev-owners" || true
  unowned=$(sed 's/.*: //' "$tmp/dev-owners" | sort -u | comm -13 - "$tmp/dev-needs")
  [ -z "$unowned" ] || fail "libtwheel-dev needs files of no package: $unowned"
  n=0
  while IFS= read -r line; do
    f=${line##*: } owners=${line%: *}
    ok=0
    for o in ${owners//,/ }; do
      o=${o%%:*}
      if [[ $o =~ ^(libc6-dev|linux-libc-dev|libgcc-[0-9]+-dev|libstdc\+\+-[0-9]+-dev)$ ]] ||
        grep -qx -- "$o" <<<"$allowed"; then
        ok=1
      fi
    done
    [ $ok -eq 1 ] || fail "libtwheel-dev needs $f (package $owners), which it does not declare"
    n=$((n + 1))
  done <"$tmp/dev-owners"
  [ "$n" -gt 0 ] || fail "dpkg -S found none of the files libtwheel-dev needs"
  echo "libtwheel-dev declares what its headers and .pc files need ($n files of other packages)"
)

build_against() (
  set -e
  if [ $install -eq 1 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${debs[@]}" >/dev/null ||
      fail "apt-get install of the packages"
    root=
    export PKG_CONFIG_PATH=
    run() { "$@"; }
  else
    root=$tmp/root
    for d in "${debs[@]}"; do dpkg -x "$d" "$root" || fail "dpkg -x $d"; done
    export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$lib/pkgconfig:/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig
    run() { LD_LIBRARY_PATH=$root/$lib "$@"; }
  fi
  # The README's C example, compiled with what pkg-config says and nothing else.
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -o "$tmp/idle_timeouts" "$here/examples/idle_timeouts.c" \
    $(pkg-config --cflags --libs twheel) || fail "the README example does not build"
  run "$tmp/idle_timeouts" >"$tmp/example.out" || fail "the README example failed"
  echo "README example (pkg-config twheel: $(pkg-config --libs twheel)) built and ran"
  # find_package(twheel) with every imported target.
  cmake -G Ninja -S "$here/tests/cmake/project" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$root/usr" \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake configure"; }
  cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "cmake build"; }
  for p in use_core use_loop use_cpp; do run "$tmp/cmake/$p" || fail "$p failed"; done
  echo "CMake project (find_package(twheel)) built and ran"
)
# packages: the build and the checks, the worker of supervise
# (scripts/lib.sh): a process group of its own, with no trap; Ctrl-C, or
# SIGTERM or SIGHUP to this script, stops the whole group (dpkg-buildpackage
# and its compilers, a check's build) and the script exits 130, 143 or
# 129 at once, printing nothing more; the copy of the tree and the
# packages' files, in $STATE_DIR, are removed either way.
# (dpkg-buildpackage reports its debian/rules killed by Ctrl-C as a
# failure, exit 2, and SIGTERM to this script alone left it building in
# a tree removed under it.)
packages() {
  tmp=$STATE_DIR
  src=$tmp/libtwheel-$version
  mkdir -p "$src"
  (cd "$here" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
    tar -x -C "$src"
  phase "dpkg-buildpackage -b -us -uc (compiles and tests the library)" \
    env -C "$src" DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -b -us -uc || exit 1
  for d in "${debs[@]}"; do cp "$tmp/${d##*/}" "$out/"; done
  ls -l "${debs[@]}" | awk '{print "    " $5 " " $NF}'
  phase "check the packages' contents" check_contents || exit 1
  sed -n 's/^  /    /p' "$PHASE_LOG"
  phase "libtwheel-dev declares what its headers and .pc files need" check_dev_deps || exit 1
  sed -n 's/^  /    /p; s/^libtwheel-dev declares/    &/p' "$PHASE_LOG"
  phase "build against them (the README's example, the CMake project)" build_against || exit 1
  sed -n 's/^/    /p' "$PHASE_LOG"
  phase_table
  echo "Debian packages: all checks passed; the .deb files are in $out"
}

# The build dependencies first, in this shell: sudo may ask for a
# password, which the worker's process group, not the terminal's, could
# not read (and with --install, the worker's sudo asks for none: -n).
build_deps() {
  (cd "$here" && dpkg-checkbuilddeps) 2>/dev/null && return 0
  echo "installing the build dependencies of debian/control"
  $SUDO apt-get update -qq
  (cd "$here" && DEBIAN_FRONTEND=noninteractive $SUDO apt-get build-dep -y -q ./)
}
phase "build dependencies (apt-get build-dep)" build_deps || exit 1
if [ $install -eq 1 ] && [ -n "$SUDO" ]; then
  sudo -v || exit 1
  SUDO="sudo -n"
fi
supervise packages
