// SPDX-License-Identifier: MIT
//
// tools/bench/NettyBench.java - Netty's HashedWheelTimer (Debian
// libnetty-java, netty-common.jar) on rearm and add_cancel, speaking the
// line protocol rt.c reads (see parse_java). bench-rt-* --netty DIR compiles it with javac into a
// temporary directory at run time.
//
// HashedWheelTimer has no re-arm: a re-arm is Timeout.cancel() plus
// newTimeout(). Both only enqueue work for the timer's worker thread, which
// ticks on its own (default 100 ms tick, 512 buckets); so the figure is the
// cost on the caller thread, and the worker's CPU is reported beside it.

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public final class NettyBench {
    static final String IMPL = "netty";
    static final int SPAN = 65536, DELTA = 30000, BLOCK = 1000;
    // The worker thread runs on the real clock while the caller inserts: in
    // add_cancel every expiry is pushed 10 minutes out so that none can fire
    // before its cancel (the other peers' loops do not run meanwhile).
    static final long BASE_MS = 600000;
    static final AtomicLong fired = new AtomicLong();
    static final TimerTask TASK = t -> fired.incrementAndGet();

    // The same PRNG as common.h: splitmix64 seeding xorshift64*, seed 42.
    static final class Rng {
        long s;
        Rng(long stream) {
            long x = 42L + stream * 0x632BE59BD9B4E019L;
            x += 0x9E3779B97F4A7C15L;
            long z = x;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            s = z ^ (z >>> 31);
            if (s == 0) s = 1;
        }
        long next() {
            s ^= s >>> 12;
            s ^= s << 25;
            s ^= s >>> 27;
            return s * 0x2545F4914F6CDD1DL;
        }
        int below(int n) {
            return (int) (((next() >>> 32) * (long) n) >>> 32);
        }
    }

    static final ThreadMXBean TMX = ManagementFactory.getThreadMXBean();
    static double lastCpuNs, lastWorkerCpuNs;

    static long processCpuNs() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean)
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        return -1;
    }

    static double rearm(int c, int m) {
        HashedWheelTimer timer = new HashedWheelTimer();
        Timeout[] t = new Timeout[c];
        fired.set(0);
        for (int i = 0; i < c; i++)
            t[i] = timer.newTimeout(TASK, DELTA, TimeUnit.MILLISECONDS);
        Rng r = new Rng(3);
        int blocks = m / BLOCK;
        long cpu0 = TMX.getCurrentThreadCpuTime(), p0 = processCpuNs();
        long t0 = System.nanoTime();
        for (int b = 0; b < blocks; b++) {
            for (int k = 0; k < BLOCK; k++) {
                int i = r.below(c);
                t[i].cancel();
                t[i] = timer.newTimeout(TASK, DELTA, TimeUnit.MILLISECONDS);
            }
        }
        long t1 = System.nanoTime();
        long done = (long) blocks * BLOCK;
        lastCpuNs = (double) (TMX.getCurrentThreadCpuTime() - cpu0) / done;
        lastWorkerCpuNs = (double) (processCpuNs() - p0) / done - lastCpuNs;
        Set<Timeout> left = timer.stop();
        if (fired.get() != 0 || left.size() != c)
            throw new IllegalStateException("rearm check failed: fired " + fired.get() + ", pending " + left.size());
        return (double) (t1 - t0) / done;
    }

    static double addCancel(int n, int[] off, int[] perm) {
        HashedWheelTimer timer = new HashedWheelTimer();
        Timeout[] t = new Timeout[n];
        fired.set(0);
        long cpu0 = TMX.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++)
            t[i] = timer.newTimeout(TASK, BASE_MS + off[i], TimeUnit.MILLISECONDS);
        boolean ok = true;
        for (int i = 0; i < n; i++)
            ok &= t[perm[i]].cancel();
        long t1 = System.nanoTime();
        lastCpuNs = (double) (TMX.getCurrentThreadCpuTime() - cpu0) / n;
        Set<Timeout> left = timer.stop();
        if (!ok || fired.get() != 0 || !left.isEmpty())
            throw new IllegalStateException("add_cancel check failed: all cancelled " + ok + ", fired "
                    + fired.get() + ", still pending " + left.size());
        return (double) (t1 - t0) / n;
    }

    static String vals(double[] v) {
        StringBuilder sb = new StringBuilder();
        for (double x : v)
            sb.append(' ').append(String.format("%.4f", x));
        return sb.toString();
    }

    static double median(double[] v) {
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    public static void main(String[] args) {
        int n = 1000000, m = 10000000, reps = 5;
        String wl = "rearm,add_cancel,add_expire";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--n": n = (int) Double.parseDouble(args[i + 1]); break;
                case "--m": m = (int) Double.parseDouble(args[i + 1]); break;
                case "--reps": reps = Integer.parseInt(args[i + 1]); break;
                case "--workload": wl = args[i + 1]; break;
                default: System.err.println("usage: NettyBench [--n N] [--m M] [--reps R] [--workload LIST]"); System.exit(2);
            }
        }
        String w = "," + wl + ",";
        if (w.contains(",rearm,")) {
            try {
                rearm(Math.max(1000, n / 10), Math.max(BLOCK, m / 10)); // JIT warm-up, not reported
                double[] v = new double[reps], cpu = new double[reps], wk = new double[reps];
                for (int i = 0; i < reps; i++) {
                    v[i] = rearm(n, m);
                    cpu[i] = lastCpuNs;
                    wk[i] = lastWorkerCpuNs;
                }
                System.out.println("RESULT rearm " + IMPL + " " + n + " ns/op" + vals(v));
                System.out.println(String.format("NOTE rearm %s HashedWheelTimer (100 ms tick, 512 buckets): "
                        + "Timeout.cancel() + newTimeout(30 s) on the caller thread; wall ns per re-arm "
                        + "(caller-thread CPU median %.0f ns; other threads of the JVM - worker, GC - "
                        + "median %.0f ns CPU per re-arm on top)", IMPL, median(cpu), median(wk)));
            } catch (RuntimeException e) {
                System.out.println("FAIL rearm " + IMPL + " " + e.getMessage());
            }
        }
        if (w.contains(",add_cancel,")) {
            int[] off = new int[n], perm = new int[n];
            Rng r = new Rng(1);
            for (int i = 0; i < n; i++)
                off[i] = 1 + r.below(SPAN);
            Rng rp = new Rng(2);
            for (int i = 0; i < n; i++)
                perm[i] = i;
            for (int i = n; i > 1; i--) {
                int j = rp.below(i);
                int x = perm[i - 1];
                perm[i - 1] = perm[j];
                perm[j] = x;
            }
            try {
                addCancel(n, off, perm); // JIT warm-up, not reported
                double[] v = new double[reps], cpu = new double[reps];
                for (int i = 0; i < reps; i++) {
                    v[i] = addCancel(n, off, perm);
                    cpu[i] = lastCpuNs;
                }
                System.out.println("RESULT add_cancel " + IMPL + " " + n + " ns/op" + vals(v));
                System.out.println(String.format("NOTE add_cancel %s newTimeout (10 min + ms offset, so the "
                        + "worker cannot fire one first) then Timeout.cancel() in random order, caller thread; wall ns per pair (caller-thread CPU median %.0f ns)",
                        IMPL, median(cpu)));
            } catch (RuntimeException e) {
                System.out.println("FAIL add_cancel " + IMPL + " " + e.getMessage());
            }
        }
        if (w.contains(",add_expire,"))
            System.out.println("SKIP add_expire on " + IMPL + ": HashedWheelTimer ticks at 1 ms at the finest: "
                    + "the 65,536-tick span would be 65 s of real waiting per rep");
        System.out.flush();
        System.exit(0);
    }
}
