#!/usr/bin/env python3
"""kernel_conversions.py - the expected values of conversions.c: the Linux
kernel's formulas (kernel/time/time.c, include/linux/jiffies.h,
include/vdso/jiffies.h of Linux 6.x, 64-bit long, USER_HZ 100) redone in
Python's exact integers, wrapping where the kernel's C arithmetic wraps,
for each HZ given. Prints the C table that conversions.c includes:

    python3 kernel_conversions.py 100 250 300 400 1000 50 1200 > conversions_expected.h

(the kernel's x86 choices of HZ; 400, not one, for the header's tests at
400; 50, below USER_HZ, and 1200, above 1000 and not a multiple of it,
where the kernel's thresholds and sums wrap in 64 bits).
"""
import sys
from math import gcd

M64 = (1 << 64) - 1
LONG_MAX = (1 << 63) - 1
ULONG_MAX = M64
NSEC_PER_SEC = 10**9
USER_HZ = 100
MAX_JIFFY_OFFSET = (LONG_MAX >> 1) - 1


def u64(x):
    return x & M64


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def shift_hz(hz):
    for lo, sh in ((12, 4), (24, 5), (48, 6), (96, 7), (192, 8), (384, 9), (768, 10),
                   (1536, 11), (3072, 12), (6144, 13)):
        if lo <= hz < lo * 2:
            return sh
    raise ValueError(hz)


def consts(hz):
    tick_nsec = (NSEC_PER_SEC + hz // 2) // hz
    sc = 31 - shift_hz(hz)
    if not ((((NSEC_PER_SEC << 2) // tick_nsec) << (sc - 2)) & 0x80000000):
        sc = 32 - shift_hz(hz)
    nsc = sc + 29
    sec_conv = u64(((NSEC_PER_SEC << sc) + tick_nsec - 1) // tick_nsec)
    nsec_conv = u64(((1 << nsc) + tick_nsec - 1) // tick_nsec)

    def sh_div(nom, den, lsh):  # long arithmetic; the operands stay positive
        return ((nom // den) << lsh) + (((nom % den) << lsh) + den // 2) // den

    max_sec = sh_div((MAX_JIFFY_OFFSET >> sc) * tick_nsec, NSEC_PER_SEC, 1) - 1
    return tick_nsec, sc, nsc, sec_conv, nsec_conv, max_sec


def timespec64_to_jiffies(hz, sec, nsec):
    tick_nsec, sc, nsc, sec_conv, nsec_conv, max_sec = consts(hz)
    usec = u64(sec)                      # u64 sec = value->tv_sec
    nsec = s64(nsec + tick_nsec - 1)     # long nsec
    if usec >= max_sec:
        usec, nsec = max_sec, 0
    return u64(u64(u64(usec * sec_conv) + (u64(u64(nsec) * nsec_conv) >> (nsc - sc))) >> sc)


def jiffies_to_timespec64(hz, j):
    tick_nsec = (NSEC_PER_SEC + hz // 2) // hz
    ns = u64(j * tick_nsec)
    return ns // NSEC_PER_SEC, ns % NSEC_PER_SEC


def jiffies_to_clock_t(hz, x):
    tick_nsec = (NSEC_PER_SEC + hz // 2) // hz
    if tick_nsec % (NSEC_PER_SEC // USER_HZ) == 0:
        r = u64(x * (USER_HZ // hz)) if hz < USER_HZ else x // (hz // USER_HZ)
    else:
        r = u64(x * tick_nsec) // (NSEC_PER_SEC // USER_HZ)
    return s64(r)                        # clock_t: long


def clock_t_to_jiffies(hz, x):
    if hz % USER_HZ == 0:
        if x >= ULONG_MAX // (hz // USER_HZ):
            return ULONG_MAX
        return u64(x * (hz // USER_HZ))
    if x >= u64(ULONG_MAX // hz * USER_HZ):
        return ULONG_MAX
    return u64(x * hz) // USER_HZ


def jiffies_64_to_clock_t(hz, x):
    tick_nsec = (NSEC_PER_SEC + hz // 2) // hz
    if tick_nsec % (NSEC_PER_SEC // USER_HZ) == 0:
        if hz < USER_HZ:
            return u64(x * USER_HZ) // hz
        if hz > USER_HZ:
            return x // (hz // USER_HZ)
        return x
    return u64(x * tick_nsec) // (NSEC_PER_SEC // USER_HZ)


def nsec_to_clock_t(x):
    return x // (NSEC_PER_SEC // USER_HZ)  # NSEC_PER_SEC % USER_HZ == 0


def jiffies_to_msecs(hz, j):
    if hz <= 1000 and 1000 % hz == 0:
        return u64((1000 // hz) * j) & 0xffffffff
    if hz > 1000 and hz % 1000 == 0:
        return (u64(j + hz // 1000 - 1) // (hz // 1000)) & 0xffffffff
    g = gcd(1000, hz)
    return u64(u64(j * (1000 // g)) + hz // g - 1) // (hz // g) & 0xffffffff


def jiffies_to_usecs(hz, j):
    if 10**6 % hz == 0:
        return u64((10**6 // hz) * j) & 0xffffffff
    g = gcd(10**6, hz)                   # HZ_TO_USEC_NUM / HZ_TO_USEC_DEN
    return u64(j * (10**6 // g)) // (hz // g) & 0xffffffff


def fmul(b, n, d):                       # kernel/time/timeconst.bc
    return (2**b * n + d - 1) // d


def fmuls(b, n, d):
    s = 0
    while fmul(s, n, d) < 2**(b - 1):
        s += 1
    return s


def fadj(b, n, d):
    d = d // gcd(n, d)
    return 2**b * (d - 1) // d


def msecs_to_jiffies(hz, m):
    if m >= 1 << 31:                     # (int)m < 0: "infinite"
        return MAX_JIFFY_OFFSET
    if hz <= 1000 and 1000 % hz == 0:
        return (m + 1000 // hz - 1) // (1000 // hz)
    if hz > 1000 and hz % 1000 == 0:
        if m > jiffies_to_msecs(hz, MAX_JIFFY_OFFSET):
            return MAX_JIFFY_OFFSET
        return u64(m * (hz // 1000))
    if hz > 1000 and m > jiffies_to_msecs(hz, MAX_JIFFY_OFFSET):
        return MAX_JIFFY_OFFSET
    s = fmuls(32, hz, 1000)              # MSEC_TO_HZ_MUL32, _ADJ32, _SHR32
    return u64(fmul(s, hz, 1000) * m + fadj(s, hz, 1000)) >> s


def usecs_to_jiffies(hz, u):
    if u > jiffies_to_usecs(hz, MAX_JIFFY_OFFSET):
        return MAX_JIFFY_OFFSET
    if 10**6 % hz == 0:
        return (u + 10**6 // hz - 1) // (10**6 // hz)
    s = fmuls(32, hz, 10**6)             # USEC_TO_HZ_MUL32, _ADJ32, _SHR32
    return u64(fmul(s, hz, 10**6) * u + fadj(s, hz, 10**6)) >> s


def jiffies64_to_nsecs(hz, j):
    if NSEC_PER_SEC % hz == 0:
        return u64((NSEC_PER_SEC // hz) * j)
    g = gcd(NSEC_PER_SEC, hz)            # HZ_TO_NSEC_NUM / HZ_TO_NSEC_DEN
    return u64(j * (NSEC_PER_SEC // g)) // (hz // g)


def jiffies64_to_msecs(hz, j):
    if hz <= 1000 and 1000 % hz == 0:
        return u64((1000 // hz) * j)
    g = gcd(1000, hz)
    return u64(j * (1000 // g)) // (hz // g)


def nsecs_to_jiffies64(hz, n):
    if NSEC_PER_SEC % hz == 0:
        return n // (NSEC_PER_SEC // hz)
    if hz % 512 == 0:
        return u64(n * hz // 512) // (NSEC_PER_SEC // 512)
    return u64(n * 9) // ((9 * NSEC_PER_SEC + hz // 2) // hz)


J = [0, 1, 2, 3, 7, 99, 100, 101, 249, 250, 299, 300, 301, 999, 1000, 1001, 12345,
     (1 << 32) - 1, 1 << 32, 1 << 40, 1 << 54, 1 << 62, ULONG_MAX // 100, ULONG_MAX // 100 + 1,
     ULONG_MAX // 250 * 100, ULONG_MAX // 250 * 100 + 1, ULONG_MAX // 10, ULONG_MAX // 10 + 1,
     MAX_JIFFY_OFFSET, LONG_MAX, ULONG_MAX - 1, ULONG_MAX]
TS = [(0, 0), (0, 1), (0, 999999), (0, 1000000), (0, 1000001), (0, 2500000), (0, 3333333),
      (0, 3333334), (0, 4000000), (0, 4000001), (0, 9999999), (0, 10000000), (0, 10000001),
      (0, 999999999), (1, 0), (1, 1), (2, 500000000), (59, 999999999), (3600, 0),
      (86400 * 365, 123456789), (1 << 31, 0), (1 << 32, 7), (1 << 40, 999999999),
      (4611686018, 0), (4611686018427, 0), (-1, 0), (-5, 500000000), (0, 1999999999),
      (3, 2000000000), (9223372036854775807, 999999999)]
NS = [0, 1, 9999999, 10000000, 10000001, 10**9, 10**18, M64]
M = [0, 1, 2, 3, 4, 5, 9, 10, 11, 999, 1000, 1001, 3999, 4000, 4001, 9999, 10000, 10001, 123456,
     (1 << 31) - 2, (1 << 31) - 1, 1 << 31, (1 << 32) - 1000, (1 << 32) - 1]


def main():
    print("/* Generated by kernel_conversions.py %s: the kernel's values. */"
          % " ".join(sys.argv[1:]))
    for hz in map(int, sys.argv[1:]):
        print("#if TWHEEL_COMPAT_HZ == %d" % hz)
        print("#define KERNEL_CONVERSIONS_HZ %d" % hz)
        print("static const struct j_row j_rows[] = {")
        for j in J:
            s, ns = jiffies_to_timespec64(hz, j)
            c = jiffies_to_clock_t(hz, j)
            print("\t{ %duL, %s, %duL, %duLL, %dLL, %dL }," % (
                j, "%dL" % c if c != -(1 << 63) else "LONG_MIN", clock_t_to_jiffies(hz, j),
                jiffies_64_to_clock_t(hz, j), s, ns))
        print("};")
        print("static const struct ts_row ts_rows[] = {")
        for sec, nsec in TS:
            lit = "%dLL" % sec if sec != -(1 << 63) else "LLONG_MIN"
            print("\t{ %s, %dL, %duL }," % (lit, nsec, timespec64_to_jiffies(hz, sec, nsec)))
        print("};")
        print("static const struct j2_row j2_rows[] = {")
        for j in J:
            print("\t{ %duL, %du, %du, %duLL, %duLL, %duLL }," % (
                j, jiffies_to_msecs(hz, j), jiffies_to_usecs(hz, j), jiffies64_to_msecs(hz, j),
                jiffies64_to_nsecs(hz, j), nsecs_to_jiffies64(hz, j)))
        print("};")
        print("static const struct m_row m_rows[] = {")
        for m in M:
            print("\t{ %du, %duL, %duL }," % (m, msecs_to_jiffies(hz, m), usecs_to_jiffies(hz, m)))
        print("};")
        print("#endif")
    print("static const struct ns_row ns_rows[] = {")
    for n in NS:
        print("\t{ %duLL, %duLL }," % (n, nsec_to_clock_t(n)))
    print("};")


if __name__ == "__main__":
    main()
