// SPDX-License-Identifier: MIT
//
// The real-time workloads of rt.h (lateness, idle_wakeups, xthread,
// expire_cpu) on io.netty.util.HashedWheelTimer (Debian libnetty-java).
// Compiled at run time by bench-rt-* --netty with javac against
// netty-common.jar; prints, per workload and metric, the line that rt.c
// reads:  RESULT <workload> netty <n> <metric> <v1> <v2> ... (one value a
// repetition), or FAIL <workload> netty <why> for a failed check.
//
// The timer uses the same tick as the C loops and 512 buckets (Netty's
// default), leak detection off, no pending limit. Each workload first runs
// one untimed warm-up repetition (JIT), then the timed ones.
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

public final class LoopBenchNetty {
    static final java.util.Map<String, StringBuilder> rows = new java.util.LinkedHashMap<>();
    static boolean failed;

    /** One repetition's figures: names and values alternate in @kv. */
    static void result(String wl, boolean ok, int n, Object... kv) {
        if (!ok) { failed = true; return; }
        for (int i = 0; i < kv.length; i += 2)
            rows.computeIfAbsent(wl + " netty " + n + " " + kv[i], k -> new StringBuilder())
                .append(String.format(" %.6f", (Double) kv[i + 1]));
    }

    static void flush(String wl) {
        if (failed) System.out.println("FAIL " + wl + " netty a repetition failed its check");
        rows.forEach((k, v) -> System.out.println("RESULT " + k + v));
        rows.clear();
        failed = false;
    }

    static long tickNs;
    static final String WORKER = "lb-netty-worker"; // 15 chars: the Linux comm limit
    static volatile Thread worker;

    static long seed;
    static long splitmix64() {
        long z = (seed += 0x9e3779b97f4a7c15L);
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Delays in ms, uniform in [1, span], as loopbench's lb_delays_ms(). */
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

    public static void main(String[] a) throws Exception {
        String wl = a[0];
        int reps = Integer.parseInt(a[1]);
        int lateN = Integer.parseInt(a[2]), lateSpan = Integer.parseInt(a[3]);
        double idleS = Double.parseDouble(a[4]);
        int idleFar = Integer.parseInt(a[5]);
        int xN = Integer.parseInt(a[6]), xSpan = Integer.parseInt(a[7]);
        int aeN = Integer.parseInt(a[8]), aeSpan = Integer.parseInt(a[9]);
        tickNs = Long.parseLong(a[10]);
        System.out.println("netty: java " + System.getProperty("java.version") + ", netty "
            + HashedWheelTimer.class.getPackage().getImplementationVersion()
            + ", tick " + tickNs / 1e6 + " ms, 512 buckets; one warm-up repetition per workload");
        for (String w : wl.split(",")) {
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
            flush(w);
        }
    }
}
