// SPDX-License-Identifier: MIT
//
// demo/peers/NettyUdpServer.java - the UDP session server of the demo
// (protocol: demo/udp_session.h) on Netty, as a Netty user writes it: one
// NIO DatagramChannel, the sessions in a HashMap keyed by their ID, and a
// HashedWheelTimer timeout per session (default tick, 100 ms), cancelled
// and scheduled anew on every datagram. The peer of udp-session-server
// under udp-load, run by scripts/demo-peers.sh.
//
//   java -cp NETTY_JARS demo/peers/NettyUdpServer.java \
//        --port 7000 --idle-ms 10000
// (NETTY_JARS: /usr/share/java/netty-{common,buffer,transport,handler,codec}.jar)
// Answers UDP_STATS with the keys udp-load reads: conns, timers, peak,
// opened, idle_closed, byes, rx, bad, rss_kb, utime_us, stime_us and its
// timer lateness fire_n, fire_p50_us, fire_p99_us, fire_max_us.
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.concurrent.TimeUnit;

public final class NettyUdpServer {
    static final int MAGIC = 0x53555754, DATA = 1, BYE = 2, CLOSED = 3, STATS = 4, MSG = 24;

    static final class Session {
        final long id;
        InetSocketAddress peer;
        Timeout timeout;
        long deadline; // System.nanoTime()

        Session(long id) {
            this.id = id;
        }
    }

    final HashMap<Long, Session> sessions = new HashMap<>();
    final HashedWheelTimer timer = new HashedWheelTimer();
    final long idleMs;
    Channel ch;
    long peak, opened, idleClosed, byes, rx, bad;
    long[] late = new long[1024]; // fire lateness, us
    int nlate;

    NettyUdpServer(long idleMs) {
        this.idleMs = idleMs;
    }

    /** On the timer thread: hand the close to the channel's event loop, which owns the map. */
    void expire(Session s) {
        long lateUs = (System.nanoTime() - s.deadline) / 1000;
        ch.eventLoop().execute(() -> {
            if (sessions.get(s.id) != s || s.timeout == null || s.timeout.isCancelled())
                return;
            sessions.remove(s.id);
            if (nlate == late.length)
                late = Arrays.copyOf(late, nlate * 2);
            late[nlate++] = lateUs;
            idleClosed++;
            ByteBuf b = Unpooled.buffer(MSG);
            b.writeIntLE(MAGIC).writeByte(CLOSED).writeZero(3).writeLongLE(s.id).writeLongLE(lateUs);
            ch.writeAndFlush(new DatagramPacket(b, s.peer));
        });
    }

    void onData(long id, InetSocketAddress from) {
        Session s = sessions.get(id);
        if (s == null) {
            s = new Session(id);
            sessions.put(id, s);
            opened++;
            peak = Math.max(peak, sessions.size());
        } else {
            s.timeout.cancel();
        }
        s.peer = from;
        s.deadline = System.nanoTime() + idleMs * 1000000L;
        final Session ss = s;
        s.timeout = timer.newTimeout(t -> expire(ss), idleMs, TimeUnit.MILLISECONDS);
    }

    void onBye(long id) {
        Session s = sessions.remove(id);
        if (s != null) {
            s.timeout.cancel();
            byes++;
        }
    }

    static long[] cpuUs() throws Exception {
        String st = new String(Files.readAllBytes(Paths.get("/proc/self/stat")), StandardCharsets.US_ASCII);
        String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
        return new long[] { Long.parseLong(f[11]) * 10000, Long.parseLong(f[12]) * 10000 }; // USER_HZ 100
    }

    static long rssKb() throws Exception {
        String[] f = new String(Files.readAllBytes(Paths.get("/proc/self/statm")), StandardCharsets.US_ASCII).split(" ");
        return Long.parseLong(f[1]) * 4;
    }

    String stats() throws Exception {
        long[] cpu = cpuUs();
        long[] l = Arrays.copyOf(late, nlate);
        Arrays.sort(l);
        long p50 = nlate > 0 ? l[(int) Math.min(nlate - 1, Math.ceil(0.5 * nlate) - 1)] : 0;
        long p99 = nlate > 0 ? l[(int) Math.min(nlate - 1, Math.ceil(0.99 * nlate) - 1)] : 0;
        long max = nlate > 0 ? l[nlate - 1] : 0;
        return "STATS worker=0 workers=1 pid=" + ProcessHandle.current().pid() + " conns=" + sessions.size()
            + " timers=" + timer.pendingTimeouts() + " peak=" + peak + " opened=" + opened
            + " idle_closed=" + idleClosed + " byes=" + byes + " rx=" + rx + " bad=" + bad
            + " rx_dropped=0 tx_failed=0 refused=0 rss_kb=" + rssKb() + " utime_us=" + cpu[0]
            + " stime_us=" + cpu[1] + " fire_n=" + nlate + " fire_p50_us=" + p50 + " fire_p99_us=" + p99
            + " fire_max_us=" + max + "\n";
    }

    final class Handler extends SimpleChannelInboundHandler<DatagramPacket> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket p) throws Exception {
            ByteBuf b = p.content();
            rx++;
            if (b.readableBytes() != MSG || b.getIntLE(0) != MAGIC) {
                bad++;
                return;
            }
            int type = b.getByte(4);
            long id = b.getLongLE(8);
            if (type == DATA && id != 0)
                onData(id, p.sender());
            else if (type == BYE && id != 0)
                onBye(id);
            else if (type == STATS)
                ctx.writeAndFlush(new DatagramPacket(Unpooled.copiedBuffer(stats(), StandardCharsets.US_ASCII),
                                                     p.sender()));
            else
                bad++;
        }
    }

    public static void main(String[] args) throws Exception {
        int port = 7000;
        long idleMs = 10000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[++i]); break;
                case "--idle-ms": idleMs = Long.parseLong(args[++i]); break;
                default:
                    System.err.println("NettyUdpServer: unknown option " + args[i]);
                    System.exit(2);
            }
        }
        NettyUdpServer srv = new NettyUdpServer(idleMs);
        Bootstrap b = new Bootstrap()
            .group(new NioEventLoopGroup(1))
            .channel(NioDatagramChannel.class)
            .option(ChannelOption.SO_RCVBUF, 64 << 20)
            .option(ChannelOption.SO_SNDBUF, 64 << 20)
            .handler(srv.new Handler());
        srv.ch = b.bind("127.0.0.1", port).sync().channel();
        System.out.println("ready: listening on 127.0.0.1:" + port + ", udp, pid " + ProcessHandle.current().pid());
        System.out.flush();
        srv.ch.closeFuture().sync();
    }
}
