#!/bin/sh
# packaging/ldconfig.sh - meson's install script (meson.add_install_script):
# make the libraries just installed in LIBDIR loadable by programs.
#
# usage: ldconfig.sh LIBDIR
#
# Runs ldconfig, which refreshes the dynamic linker's cache, only when all
# of these hold (as make install does on Debian for /usr/local):
#   - DESTDIR is unset or empty: a staged install (packaging, tests) is
#     not the running system, and dpkg runs ldconfig itself;
#   - it runs as root: nobody else can write the cache;
#   - LIBDIR is one of the directories the dynamic linker searches (the
#     ones ldconfig lists from /etc/ld.so.conf and its built-in ones).
# Otherwise it runs nothing; for a LIBDIR the linker does not search, it
# says how a program finds the libraries (LD_LIBRARY_PATH or an rpath).
# Always exits 0: a cache left stale must not fail an install.
libdir=$1

# Meson before 1.1 captures an install script's output and shows it only
# on failure: say it on the terminal then, if there is one.
say() {
	if [ -t 1 ] || ! { echo "$*" >/dev/tty; } 2>/dev/null; then
		echo "$*"
	fi
}

if [ -n "${DESTDIR:-}" ]; then
	exit 0
fi

ldconfig=$(command -v ldconfig 2>/dev/null || true)
for d in /sbin /usr/sbin; do
	[ -n "$ldconfig" ] && break
	[ -x "$d/ldconfig" ] && ldconfig=$d/ldconfig
done

# The directories the linker searches, compared by inode (with a merged
# /usr, /lib/x86_64-linux-gnu and /usr/lib/x86_64-linux-gnu are one).
searched=false
if [ -n "$ldconfig" ]; then
	dirs=$("$ldconfig" -v -N -X 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p')
	for d in $dirs; do
		if [ "$d" -ef "$libdir" ]; then
			searched=true
			break
		fi
	done
fi

if $searched; then
	if [ "$(id -u)" -eq 0 ]; then
		say "Running ldconfig: $libdir is on the dynamic linker's path"
		"$ldconfig" || say "ldconfig failed: run it as root before using libtwheel"
	else
		say "$libdir is on the dynamic linker's path: run ldconfig as root" \
			"(sudo ldconfig) before using libtwheel"
	fi
else
	say "$libdir is not on the dynamic linker's path: run programs with" \
		"LD_LIBRARY_PATH=$libdir, or link them with" \
		"-Wl,-rpath,$libdir (docs/install.md)"
fi
exit 0
