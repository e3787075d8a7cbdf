// SPDX-License-Identifier: MIT
//
// tools/bench/Netty.java - Netty's HashedWheelTimer (Debian libnetty-java,
// netty-common.jar) on the real-time workloads of rt.h: rearm and
// add_cancel (the timer's default 100 ms tick), lateness, idle_wakeups,
// xthread and expire_cpu (the C loops' tick, 512 buckets, leak detection
// off, no pending limit). bench-rt-* --netty DIR compiles it with javac
// into a temporary directory and reads, per workload and metric,
//   RESULT <workload> netty <n> <metric> <v1> <v2> ...   one value a rep
//   NOTE <workload> netty <what the figure measures>
//   FAIL <workload> netty <why>     SKIP <what> <why>
// Each workload first runs one untimed warm-up repetition (JIT).
//
// HashedWheelTimer has no re-arm: a re-arm is Timeout.cancel() plus
// newTimeout(). Both only enqueue work for the timer's worker thread, which
// ticks on its own; so the figure is the cost on the caller thread, and the
// worker's CPU is reported beside it.
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

public final class Netty {
    static final int SPAN = 65536, DELTA = 30000, BLOCK = 1000;
    // The worker thread runs on the real clock while the caller inserts: in
    // add_cancel every expiry is pushed 10 minutes out so that none can fire
    // before its cancel (the other peers' loops do not run meanwhile).
    static final long BASE_MS = 600000;
    static final AtomicLong fired = new AtomicLong();
    static final TimerTask TASK = t -> fired.incrementAndGet();
    static long tickNs;
    static final String WORKER = "lb-netty-worker"; // 15 chars: the Linux comm limit
    static volatile Thread worker;

    static final Map<String, StringBuilder> rows = new LinkedHashMap<>();
    static String failed;
    static double cpuNs, workerCpuNs; // the last rearm or add_cancel's, per operation

    /** One repetition's figures: names and values alternate in @kv. */
    static void result(String wl, boolean ok, int n, Object... kv) {
        if (!ok) { failed = "a repetition failed its check"; return; }
        for (int i = 0; i < kv.length; i += 2)
            rows.computeIfAbsent(wl + " netty " + n + " " + kv[i], k -> new StringBuilder())
                .append(String.format(" %.6f", (Double) kv[i + 1]));
    }

    static void flush(String wl, String note) {
        if (failed != null) System.out.println("FAIL " + wl + " netty " + failed);
        rows.forEach((k, v) -> System.out.println("RESULT " + k + v));
        if (note != null && !rows.isEmpty()) System.out.println("NOTE " + wl + " netty " + note);
        rows.clear();
        failed = null;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static long seed;
    static long splitmix64() {
        long z = (seed += 0x9e3779b97f4a7c15L);
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Delays in ms, uniform in [1, span], as rt_wl.c's delays_ms(). */
    static long[] delaysMs(int n, int span, long s, boolean descending) {
        seed = s;
        long[] d = new long[n];
        for (int i = 0; i < n; i++)
            d[i] = 1 + Long.remainderUnsigned(splitmix64(), span);
        if (descending) {
            Arrays.sort(d);
            for (int i = 0, j = n - 1; i < j; i++, j--) { long t = d[i]; d[i] = d[j]; d[j] = t; }
        }
        return d;
    }

    /** common.h's generator: xorshift64* seeded by splitmix64 from 42, stream @stream. */
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
        cpuNs = (double) (TMX.getCurrentThreadCpuTime() - cpu0) / done;
        workerCpuNs = (double) (processCpuNs() - p0) / done - cpuNs;
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
        cpuNs = (double) (TMX.getCurrentThreadCpuTime() - cpu0) / n;
        Set<Timeout> left = timer.stop();
        if (!ok || fired.get() != 0 || !left.isEmpty())
            throw new IllegalStateException("add_cancel check failed: all cancelled " + ok + ", fired "
                    + fired.get() + ", still pending " + left.size());
        return (double) (t1 - t0) / n;
    }

    static HashedWheelTimer newTimer() {
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, WORKER);
            t.setDaemon(true);
            worker = t;
            return t;
        };
        HashedWheelTimer t = new HashedWheelTimer(tf, tickNs, TimeUnit.NANOSECONDS, 512, false, -1);
        t.start();
        return t;
    }

    static void lateness(int n, int span, boolean print) throws Exception {
        long[] d = delaysMs(n, span, 42, true);
        long[] due = new long[n], fired = new long[n];
        CountDownLatch done = new CountDownLatch(n);
        HashedWheelTimer timer = newTimer();
        for (int i = 0; i < n; i++) {
            final int k = i;
            due[i] = System.nanoTime() + d[i] * 1_000_000L;
            timer.newTimeout(to -> { fired[k] = System.nanoTime(); done.countDown(); },
                             d[i], TimeUnit.MILLISECONDS);
        }
        boolean ok = done.await(span + 60_000L, TimeUnit.MILLISECONDS);
        timer.stop();
        if (!print) return;
        long[] late = new long[n];
        int early = 0;
        for (int i = 0; i < n; i++) { late[i] = fired[i] - due[i]; if (late[i] < 0) early++; }
        Arrays.sort(late);
        result("lateness", ok, n, "p50_ms", late[n / 2] / 1e6, "p99_ms", late[n * 99 / 100] / 1e6,
            "max_ms", late[n - 1] / 1e6, "min_ms", late[0] / 1e6, "early_pct", 100.0 * early / n);
    }

    /** Voluntary context switches of the worker, found by its thread name. */
    static long workerVcsw() throws Exception {
        try (Stream<Path> tasks = Files.list(Paths.get("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                String comm = new String(Files.readAllBytes(t.resolve("comm"))).trim();
                if (!comm.equals(WORKER)) continue;
                for (String line : Files.readAllLines(t.resolve("status")))
                    if (line.startsWith("voluntary_ctxt_switches:"))
                        return Long.parseLong(line.substring(24).trim());
            }
        }
        return -1;
    }

    static void idle(double seconds, int farS, boolean print) throws Exception {
        HashedWheelTimer timer = newTimer();
        timer.newTimeout(to -> { }, farS, TimeUnit.SECONDS);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread.sleep(100);
        long t0 = System.nanoTime(), v0 = workerVcsw(), c0 = mx.getThreadCpuTime(worker.getId());
        Thread.sleep((long) (seconds * 1000));
        long v1 = workerVcsw(), c1 = mx.getThreadCpuTime(worker.getId()), t1 = System.nanoTime();
        int left = timer.stop().size();
        double s = (t1 - t0) / 1e9;
        if (print)
            result("idle_wakeups", v0 >= 0 && left == 1, 1, "wakeups_per_s", (v1 - v0) / s,
                "cpu_ms_per_s", (c1 - c0) / 1e6 / s);
    }

    static void xthread(int n, int span, boolean print) throws Exception {
        int[] fired = new int[2 * n];
        CountDownLatch done = new CountDownLatch(2 * n);
        HashedWheelTimer timer = newTimer();
        long[][] d = { delaysMs(n, span, 42, false), delaysMs(n, span, 43, false) };
        long[] tEnd = new long[2];
        CountDownLatch go = new CountDownLatch(1);
        Thread[] prod = new Thread[2];
        for (int k = 0; k < 2; k++) {
            final int p = k;
            prod[k] = new Thread(() -> {
                try { go.await(); } catch (InterruptedException e) { return; }
                for (int i = 0; i < n; i++) {
                    final int idx = p * n + i;
                    // the worker is the only thread writing fired[]; the latch publishes it
                    timer.newTimeout(to -> { fired[idx]++; done.countDown(); },
                                     d[p][i], TimeUnit.MILLISECONDS);
                }
                tEnd[p] = System.nanoTime();
            });
            prod[k].start();
        }
        long t0 = System.nanoTime();
        go.countDown();
        for (Thread t : prod) t.join();
        boolean ok = done.await(span + 60_000L, TimeUnit.MILLISECONDS);
        long tAll = System.nanoTime();
        timer.stop();
        for (int f : fired) ok &= f == 1;
        long tProd = Math.max(tEnd[0], tEnd[1]);
        if (print)
            result("xthread", ok, 2 * n, "Mschedules_per_s", 2.0 * n / ((tProd - t0) / 1e9) / 1e6,
                "Mfired_per_s_e2e", 2.0 * n / ((tAll - t0) / 1e9) / 1e6);
    }

    static void addExpire(int n, int span, boolean print) throws Exception {
        long[] d = delaysMs(n, span, 42, false);
        CountDownLatch done = new CountDownLatch(n);
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        HashedWheelTimer timer = newTimer();
        TimerTask task = to -> done.countDown();
        long c0 = os.getProcessCpuTime(), w0 = System.nanoTime();
        for (int i = 0; i < n; i++)
            timer.newTimeout(task, d[i], TimeUnit.MILLISECONDS);
        boolean ok = done.await(span + 60_000L, TimeUnit.MILLISECONDS);
        long c1 = os.getProcessCpuTime(), w1 = System.nanoTime();
        timer.stop();
        if (print)
            result("expire_cpu", ok, n, "cpu_ns_per_timer", (double) (c1 - c0) / n, "wall_s", (w1 - w0) / 1e9);
    }


    /** rearm and add_cancel: @reps timed repetitions after a warm-up at a tenth of the size. */
    static void throughput(String wl, int n, int m, int reps) {
        int[] off = new int[n], perm = new int[n];
        Rng r = new Rng(1), rp = new Rng(2);
        for (int i = 0; i < n; i++) { off[i] = 1 + r.below(SPAN); perm[i] = i; }
        for (int i = n; i > 1; i--) { int j = rp.below(i), x = perm[i - 1]; perm[i - 1] = perm[j]; perm[j] = x; }
        boolean re = wl.equals("rearm");
        double[] v = new double[reps], cpu = new double[reps], wk = new double[reps];
        try {
            if (re) rearm(Math.max(1000, n / 10), Math.max(BLOCK, m / 10)); else addCancel(n, off, perm);
            for (int i = 0; i < reps; i++) {
                v[i] = re ? rearm(n, m) : addCancel(n, off, perm);
                cpu[i] = cpuNs;
                wk[i] = workerCpuNs;
                result(wl, true, n, "ns/op", v[i]);
            }
        } catch (RuntimeException e) {
            failed = e.getMessage();
        }
        flush(wl, re ? String.format("HashedWheelTimer (100 ms tick, 512 buckets): Timeout.cancel() + "
                + "newTimeout(30 s) on the caller thread; wall ns per re-arm (caller-thread CPU median %.0f ns; "
                + "other threads of the JVM - worker, GC - median %.0f ns CPU per re-arm on top)",
                median(cpu), median(wk))
            : String.format("newTimeout (10 min + ms offset, so the worker cannot fire one first) then "
                + "Timeout.cancel() in random order, caller thread; wall ns per pair (caller-thread CPU "
                + "median %.0f ns)", median(cpu)));
    }

    public static void main(String[] a) throws Exception {
        int reps = Integer.parseInt(a[1]), n = Integer.parseInt(a[2]), m = Integer.parseInt(a[3]);
        int lateN = Integer.parseInt(a[4]), lateSpan = Integer.parseInt(a[5]);
        double idleS = Double.parseDouble(a[6]);
        int idleFar = Integer.parseInt(a[7]);
        int xN = Integer.parseInt(a[8]), xSpan = Integer.parseInt(a[9]);
        int aeN = Integer.parseInt(a[10]), aeSpan = Integer.parseInt(a[11]);
        tickNs = Long.parseLong(a[12]);
        System.out.println("java " + System.getProperty("java.version") + ", netty "
            + HashedWheelTimer.class.getPackage().getImplementationVersion()
            + ", tick " + tickNs / 1e6 + " ms, 512 buckets; one warm-up repetition per workload");
        for (String w : a[0].split(",")) {
            if (w.equals("rearm") || w.equals("add_cancel")) {
                throughput(w, n, m, reps);
                continue;
            }
            if (w.equals("add_expire")) {
                System.out.println("SKIP add_expire on netty: HashedWheelTimer ticks at 1 ms at the finest: "
                    + "the 65,536-tick span would be 65 s of real waiting per rep");
                continue;
            }
            for (int r = -1; r < reps; r++) {
                boolean print = r >= 0;
                switch (w) {
                case "lateness": lateness(lateN, lateSpan, print); break;
                case "idle_wakeups": if (print) idle(idleS, idleFar, true); break;
                case "xthread": xthread(xN, xSpan, print); break;
                case "expire_cpu": addExpire(aeN, aeSpan, print); break;
                default: break;
                }
                System.gc();
            }
            flush(w, null);
        }
        System.out.flush();
        System.exit(0);
    }
}
