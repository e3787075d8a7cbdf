#!/bin/sh
# diagnostics.sh CHECK CC INCLUDES FILE - a compile-time check of
# <twheel/compat/timer_list.h>, compiled as Linux up to 5.17 built such
# code (gnu89), with -Werror; the files say what each checks:
#   time_after_type   time_after_type.c: unsigned long arguments compile,
#                     a jiffies value kept in 32 bits draws the kernel's
#                     warning, in each of 8 uses; the 64-bit forms take
#                     unsigned long long (u64), and an unsigned long or
#                     a 32-bit value draws it, in each of 8 more;
#   time_after_const  time_after_type.c again: the comparisons declare no
#                     uninitialised const object (jiffies is const
#                     volatile), which clang 21 warns of by default
#                     (-Wdefault-const-init-var-unsafe) and GCC under
#                     -Wc++-compat, outside __extension__ (defined away);
#   jiffies_read_only jiffies_read_only.c: READ_ONCE(jiffies) and
#                     &jiffies compile; 4 writes to jiffies or jiffies_64
#                     do not;
#   before_4_15       before_4_15.c: 8 uses of Linux before 4.15's
#                     initialisers compile with TWHEEL_COMPAT_TIMER_DATA
#                     and, without it, are errors that name it.
# Exit 0 pass, 1 fail (saying which use).
check=$1 cc=$2 inc=$3 src=$4
d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT
# shellcheck disable=SC2086 # $inc is a list of flags
compile() { "$cc" -std=gnu89 -Wall -Wextra -Werror -c -o "$d/o.o" $inc "$@" "$src" 2>"$d/err"; }
fail() { cat "$d/err"; echo "FAIL: $*"; exit 1; }
case $check in
time_after_type)
  compile -DBAD=0 || fail "unsigned long arguments do not compile"
  for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
    compile -DBAD=$n && fail "BAD=$n compiled"
    grep -q "distinct pointer types" "$d/err" || fail "BAD=$n: not the kernel's warning"
  done ;;
time_after_const)
  compile -DBAD=0 -Wno-error -Wc++-compat -D__extension__= || fail "does not compile"
  grep -i "uninitiali[sz]ed" "$d/err" && fail "an uninitialised const object" ;;
jiffies_read_only)
  compile -DBAD=0 || fail "READ_ONCE(jiffies) does not compile"
  for n in 1 2 3 4; do
    compile -DBAD=$n && fail "BAD=$n (a write to jiffies) compiled"
  done ;;
before_4_15)
  for n in 1 2 3 4 5 6 7 8; do
    compile -DNAME=$n -DTWHEEL_COMPAT_TIMER_DATA || fail "NAME=$n with TWHEEL_COMPAT_TIMER_DATA"
    compile -DNAME=$n && fail "NAME=$n compiled without TWHEEL_COMPAT_TIMER_DATA"
    grep "Linux before 4.15" "$d/err" | grep -q TWHEEL_COMPAT_TIMER_DATA || fail "NAME=$n: the error does not say why"
  done ;;
*) echo "diagnostics.sh: unknown check $check"; exit 2 ;;
esac
echo "ok: $check"
