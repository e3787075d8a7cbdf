#!/usr/bin/env bash
# tests/install/run_install_test.sh - what a user gets from `meson install`,
# staged with --destdir, used through pkg-config only (no build tree):
#   1. every installed C header (<twheel/compat/*.h> too) compiles alone as plain ISO C11,
#      C17 and GNU C11, by cc and by clang (-std=... -Wall -Wextra -Wpedantic -Werror,
#      no feature macros; <twheel/uv.h> with _POSIX_C_SOURCE, which libuv's
#      <uv.h> needs) with its package's --cflags, and alone as C++17 (c++ and
#      clang++), and every C++ header as C++17; all the C ones
#      together as C++17, linked with a function of each C library; a program that
#      sets TWHEEL_DEBUG_CHECKS against the library's build does not compile;
#   2. a program per installed library, built with
#      `pkg-config --cflags --libs`, runs as docs/install.md says it does
#      (the loop's also linked -static with `pkg-config --static`):
#      outside /usr with the rpath it gives and no LD_LIBRARY_PATH (the
#      libraries over libtwheel find it beside them, RUNPATH $ORIGIN); in
#      /usr, as a distribution installs it, with no rpath, the libraries
#      carrying none either (Debian forbids one): the linker's default
#      path finds them, for which LD_LIBRARY_PATH=<staged libdir> stands in;
#   3. every .pc file requires the project's own modules at >= this
#      version, and twheel-uring.pc the liburing its library imports;
#   4. the install script (packaging/ldconfig.sh) does nothing under
#      DESTDIR, and for a directory the dynamic linker does not search it
#      runs no ldconfig and says what to do instead.
#
# usage: run_install_test.sh BUILDDIR SRCDIR LIBDIR INCLUDEDIR [PACKAGE...]
#   LIBDIR, INCLUDEDIR: absolute, as installed (without DESTDIR);
#   PACKAGE: the optional packages built: uring uv ev event epoll cpp asio.
# Exit 0 pass, 1 fail, 77 skip (no pkg-config; a failure with
# TWHEEL_TEST_REQUIRE_DEPS=1, which scripts/test.sh sets: it installs it).
set -eu
build=$1 src=$2 libdir=$3 includedir=$4
shift 4
pkgs=" $* "
has() { [[ $pkgs == *" $1 "* ]]; }
if ! command -v pkg-config >/dev/null; then
	[ -z "${TWHEEL_TEST_REQUIRE_DEPS:-}" ] || { echo "FAIL: pkg-config is not installed"; exit 1; }
	echo "SKIP: pkg-config is not installed"
	exit 77
fi
cc=${CC:-cc} cxx=${CXX:-c++}
# The C headers alone are also compiled by clang and clang++ (scripts/deps.sh
# test installs them; with TWHEEL_TEST_REQUIRE_DEPS=1 one missing fails).
ccs=("$cc") cxxs=("$cxx")
for c in clang clang++; do
	if command -v $c >/dev/null; then
		[ $c = clang ] && ccs+=(clang) || cxxs+=(clang++)
	elif [ -n "${TWHEEL_TEST_REQUIRE_DEPS:-}" ]; then
		echo "FAIL: $c is not installed"
		exit 1
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/twheel-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage
fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$stage"
# The staged .pc files first; sysroot: their -I and -L point into the stage.
export PKG_CONFIG_PATH=$stage$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_SYSROOT_DIR=$stage
# pkgconf puts the sysroot before a path variable, pkg-config 0.29 does not.
pcdir=$(pkg-config --variable=libdir twheel)
pcdir=$stage${pcdir#"$stage"}
[ "$pcdir" = "$stage$libdir" ] || fail "pkg-config finds another twheel.pc than the staged one"
rpath=-Wl,-rpath,$pcdir

# In /usr the linker's default path finds the libraries (meson.build gives
# them no RUNPATH there); anywhere else the program's rpath finds those it
# names, and $ORIGIN in theirs finds libtwheel.
case $libdir in
/usr/lib | /usr/lib/* | /usr/lib64 | /usr/lib64/*) in_usr=1 ;;
*) in_usr=0 ;;
esac
for so in "$pcdir"/libtwheel*.so.*.*.*; do
	runpath=$(readelf -d "$so" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]$/\2/p')
	case $in_usr,${so##*/} in
	1,*) [ -z "$runpath" ] || fail "${so##*/} installed in /usr has a RUNPATH: $runpath" ;;
	0,libtwheel.so.*) ;;
	0,*) [ "$runpath" = '$ORIGIN' ] ||
		fail "${so##*/} installed in $libdir has RUNPATH '$runpath', not \$ORIGIN" ;;
	esac
done
# The installed programs (-Ddemo, -Dtools) likewise: outside /usr each
# finds every library it needs with no LD_LIBRARY_PATH (RUNPATH
# $ORIGIN/../<libdir>), so that it runs from any prefix.
np=0
for prog in "$stage${includedir%/include}"/bin/*; do
	[ -f "$prog" ] && [ -x "$prog" ] || continue
	if [ $in_usr -eq 1 ]; then
		! readelf -d "$prog" | grep -q 'R.*PATH' || fail "${prog##*/} installed in /usr has a RUNPATH"
	elif env -u LD_LIBRARY_PATH ldd "$prog" | grep 'not found'; then
		fail "${prog##*/} installed in ${includedir%/include}/bin does not find its libraries without LD_LIBRARY_PATH"
	fi
	np=$((np + 1))
done
echo "$np installed programs find their libraries"
if [ $in_usr -eq 1 ]; then
	link=() run_env=(env "LD_LIBRARY_PATH=$pcdir")
else
	link=("$rpath") run_env=(env -u LD_LIBRARY_PATH)
fi

# 1. Headers alone, strict. The compiler's own include path does not have
# the stage: -I from --cflags only.
header_pkg() {
	case $1 in
	loop.h) echo twheel-uring ;;
	uv.h | ev.h | event.h | epoll.h) echo "twheel-${1%.h}" ;;
	twheel.hpp | fn.hpp | timer.hpp) echo twheel++ ;;
	loop.hpp | co.hpp) echo twheel-uring++ ;;
	asio.hpp) echo twheel-asio++ ;;
	*) echo twheel ;;
	esac
}
n=0
for h in "$stage$includedir"/twheel/*.h* "$stage$includedir"/twheel/compat/*.h; do
	h=${h#"$stage$includedir"/twheel/}
	p=$(header_pkg "$h")
	# shellcheck disable=SC2046
	case $h in
	*.h)
		# libuv's own <uv.h> needs POSIX declarations (pthread_rwlock_t)
		# that plain -std=c11 hides; every other header needs none.
		posix=()
		[ "$h" = uv.h ] && posix=(-D_POSIX_C_SOURCE=200809L)
		printf '#include <twheel/%s>\nint twheel_header_test;\n' "$h" >"$tmp/h.c"
		cp "$tmp/h.c" "$tmp/h.cpp"
		for c in "${ccs[@]}"; do
			for std in c11 c17 gnu11; do
				# shellcheck disable=SC2046
				"$c" -std=$std -Wpedantic -Werror -Wall -Wextra "${posix[@]}" -c "$tmp/h.c" \
					-o "$tmp/h.o" $(pkg-config --cflags "$p") ||
					fail "<twheel/$h> does not compile with $c -std=$std -Wpedantic ${posix[*]} and pkg-config --cflags $p"
			done
		done
		for c in "${cxxs[@]}"; do
			# shellcheck disable=SC2046
			"$c" -std=c++17 -Wpedantic -Werror -Wall -Wextra -c "$tmp/h.cpp" -o "$tmp/h.o" \
				$(pkg-config --cflags "$p") ||
				fail "<twheel/$h> alone does not compile with $c -std=c++17 -Wpedantic and pkg-config --cflags $p"
		done
		;;
	*.hpp)
		[ "$h" = asio.hpp ] && ! has asio && continue
		printf '#include <twheel/%s>\nint twheel_header_test;\n' "$h" >"$tmp/h.cpp"
		# <twheel/co.hpp> is C++20 (coroutines); a C++17 build gets its
		# one-line #error, nothing else of it
		std=c++17
		if [ "$h" = co.hpp ]; then
			std=c++20
			# shellcheck disable=SC2046
			if "$cxx" -std=c++17 -c "$tmp/h.cpp" -o "$tmp/h.o" $(pkg-config --cflags "$p") \
				2>"$tmp/h.err"; then
				fail "<twheel/co.hpp> compiles as C++17: it should refuse with its #error"
			fi
			grep -q 'needs C++20' "$tmp/h.err" ||
				fail "<twheel/co.hpp> as C++17 does not say it needs C++20"
		fi
		"$cxx" -std=$std -pedantic -Werror -Wall -Wextra -c "$tmp/h.cpp" -o "$tmp/h.o" \
			$(pkg-config --cflags "$p") ||
			fail "<twheel/$h> does not compile with -std=$std -pedantic and pkg-config --cflags $p"
		;;
	esac
	n=$((n + 1))
done
echo "$n installed headers compile alone: C as -std=c11, c17 and gnu11 -Wpedantic (${ccs[*]}) and as C++17 (${cxxs[*]}), C++ as -std=c++17 (co.hpp: c++20)"

# The C headers from C++: one program includes them all and takes a
# function of each C library, so that a declaration without C linkage
# (extern "C") fails to link.
cpkgs=(twheel) fns=(twheel_version twheel_compat_now)
{
	for h in "$stage$includedir"/twheel/*.h "$stage$includedir"/twheel/compat/*.h; do
		echo "#include <twheel/${h#"$stage$includedir"/twheel/}>"
	done
} >"$tmp/c_from_cxx.cpp"
has uring && cpkgs+=(twheel-uring) fns+=(twheel_loop_features)
for a in uv ev event epoll; do
	has $a && cpkgs+=("twheel-$a") fns+=("twheel_${a}_create")
done
{
	echo 'using fn = void (*)();'
	echo 'int main() { fn volatile fns[] = {'
	printf '\treinterpret_cast<fn>(&%s),\n' "${fns[@]}"
	echo '}; return fns[0] == nullptr; }'
} >>"$tmp/c_from_cxx.cpp"
# shellcheck disable=SC2046
$cxx -std=c++17 -pedantic -Werror -Wall -Wextra -o "$tmp/c_from_cxx" "$tmp/c_from_cxx.cpp" \
	$(pkg-config --cflags --libs "${cpkgs[@]}") "${link[@]}" ||
	fail "the C headers do not compile and link as C++17 with pkg-config --cflags --libs ${cpkgs[*]}"
echo "the C headers compile as C++17 and their functions link (${cpkgs[*]})"

# TWHEEL_DEBUG_CHECKS is the library's: with the other value struct
# tw_timer (and every struct embedding it) would not have the library's
# layout, so a program that defines it so does not compile.
dc=$(sed -n 's/^#define TWHEEL_DEBUG_CHECKS \([01]\)$/\1/p' "$stage$includedir/twheel/config.h")
[ -n "$dc" ] || fail "the installed <twheel/config.h> defines no TWHEEL_DEBUG_CHECKS"
printf '#include <twheel/twheel.h>\nint twheel_header_test;\n' >"$tmp/h.c"
# shellcheck disable=SC2046
if "$cc" -DTWHEEL_DEBUG_CHECKS=$((1 - dc)) -c "$tmp/h.c" -o "$tmp/h.o" $(pkg-config --cflags twheel) \
	2>"$tmp/h.err"; then
	fail "<twheel/twheel.h> compiles with -DTWHEEL_DEBUG_CHECKS=$((1 - dc)) against a library built with $dc"
fi
grep -q "differs from libtwheel's build" "$tmp/h.err" ||
	{ cat "$tmp/h.err"; fail "-DTWHEEL_DEBUG_CHECKS=$((1 - dc)) fails, but not with the header's message"; }
echo "-DTWHEEL_DEBUG_CHECKS=$((1 - dc)) against a library built with $dc: refused"

# 2. One program per library: built with pkg-config (and the rpath outside
# /usr), run as is (in /usr: from the staged libdir, the default path's
# stand-in).
# C with the compiler's default standard, as a user types it; C++ as C++17.
run() { # NAME LANG SOURCE PACKAGE [EXTRA...]
	local name=$1 lang=$2 file=$3 p=$4
	shift 4
	local comp=$cc
	[ "$lang" = c++ ] && comp="$cxx -std=c++17"
	# shellcheck disable=SC2046
	$comp -o "$tmp/$name" "$file" \
		$(pkg-config --cflags --libs "$p") "${link[@]}" "$@" ||
		fail "$name does not build with pkg-config --cflags --libs $p ${link[*]}"
	local rc=0
	"${run_env[@]}" "$tmp/$name" >"$tmp/run.log" 2>&1 || rc=$?
	# 77: the example skips where the kernel refuses io_uring.
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || { cat "$tmp/run.log"; fail "$name exits $rc"; }
	echo "ran $name ($p)"
}
run idle_timeouts c "$src/examples/idle_timeouts.c" twheel
if has uring; then
	# -std=c11: <twheel/loop.h> without liburing's header or _GNU_SOURCE.
	run use_loop c "$src/tests/cmake/project/use_loop.c" twheel-uring -std=c11 -pedantic
	# The static libraries, as docs/install.md links them: pkg-config
	# --static (the loop's -pthread and liburing) and -static.
	# shellcheck disable=SC2046
	"$cc" -static -o "$tmp/use_loop_static" "$src/tests/cmake/project/use_loop.c" \
		$(pkg-config --static --cflags --libs twheel-uring) ||
		fail "use_loop does not link with -static and pkg-config --static --cflags --libs twheel-uring"
	rc=0
	env -u LD_LIBRARY_PATH "$tmp/use_loop_static" >"$tmp/run.log" 2>&1 || rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || { cat "$tmp/run.log"; fail "use_loop linked -static exits $rc"; }
	echo "ran use_loop linked -static (pkg-config --static twheel-uring)"
	# twheel-uring.pc requires the liburing that libtwheel-uring needs: the
	# newest LIBURING_x.y version of the symbols it imports.
	need=$(objdump -T "$pcdir"/libtwheel-uring.so.*.*.* |
		sed -n 's/.*[( ]LIBURING_\([0-9.]*\)[) ].*/\1/p' | sort -V | tail -1)
	req=$(pkg-config --print-requires twheel-uring | sed -n 's/^liburing >= //p')
	[ -n "$need" ] || fail "libtwheel-uring imports no versioned liburing symbol (objdump -T)"
	[ -n "$req" ] && [ "$(printf '%s\n' "$need" "$req" | sort -V | tail -1)" = "$req" ] ||
		fail "libtwheel-uring needs liburing $need (LIBURING_$need), twheel-uring.pc requires:" \
			"$(pkg-config --print-requires twheel-uring | tr '\n' ' ')"
	echo "twheel-uring.pc requires liburing >= $req; the library needs $need"
fi
# Every other module requires the project's own modules at least at this
# version: its headers and library use what this version added (a newer
# TWHEEL_x.y symbol, a field), so an older libtwheel found first on the
# pkg-config path must be refused there, not at link or load time.
ver=$(pkg-config --modversion twheel)
for pc in "$pcdir"/pkgconfig/*.pc; do
	m=$(basename "$pc" .pc)
	while read -r dep op v; do
		case $dep in twheel*) ;; *) continue ;; esac
		[ "$op" = ">=" ] && [ "$v" = "$ver" ] ||
			fail "$m.pc requires '$dep${op:+ $op $v}', not '$dep >= $ver'"
	done < <(pkg-config --print-requires "$m")
done
echo "every module requires the project's modules at >= $ver"
for a in uv ev event epoll; do
	has $a && run ${a}_example c "$src/examples/event-loops/${a}_example.c" twheel-$a
done
if has cpp; then
	run wheel_example c++ "$src/cpp/examples/wheel_example.cpp" twheel++
	has uring && run loop_example c++ "$src/cpp/examples/loop_example.cpp" twheel-uring++
	# Boost.Asio has no pkg-config file: its headers are on the default path.
	has asio && run asio_example c++ "$src/examples/event-loops/asio_example.cpp" twheel-asio++ -pthread
fi

# 3. The install script: silent under DESTDIR; a hint, no ldconfig, for a
# directory the dynamic linker does not search.
script=$src/packaging/ldconfig.sh
# setsid: no controlling terminal, so that it says it on stdout.
out=$(DESTDIR=$stage setsid -w "$script" "$libdir")
[ -z "$out" ] || fail "ldconfig.sh under DESTDIR printed: $out"
out=$(env -u DESTDIR setsid -w "$script" "$tmp/not-searched")
[[ $out == *"LD_LIBRARY_PATH=$tmp/not-searched"* && $out == *"-Wl,-rpath,$tmp/not-searched"* ]] ||
	fail "ldconfig.sh gives no hint for a directory outside the linker's path: $out"
echo "ldconfig.sh: nothing under DESTDIR; a hint outside the linker's path"
