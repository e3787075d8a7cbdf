// SPDX-License-Identifier: MIT
//
// demo/peers/NettyIdleServer.java - the idle-timeout TCP echo server on
// Netty (Debian's libnetty-java), as a Netty user writes it: an
// IdleStateHandler per connection closes it after --idle-ms without a read;
// every byte read is echoed. The peer of idle-server-c under idle-load
// (--no-stats: it has no STATS line), run by scripts/demo-peers.sh.
//
// --http: HTTP/1.1 keep-alive as the demo's servers speak it with --http
// (demo_server.c's demo_http_input()) to idle-load's requests: each
// complete request head, up to its blank line (CR/LF before a request line
// skipped, a bare LF ends a line), is answered with their reply,
// "HTTP/1.1 204 No Content" and "Connection: keep-alive"; a head over 1024
// bytes closes the connection. Unlike them it never closes after a reply
// (HTTP/1.0, "Connection: close"): idle-load asks for neither. The head's
// state is the connection's own handler (two fields); no HTTP codec.
//
// One process holds at most RLIMIT_NOFILE connections: --reuseport lets
// several processes share the port (NIO, SO_REUSEPORT), as the demo's
// --workers do. One NIO event loop thread (--threads) by default, as the
// demo's worker has one loop.
//
//   java -cp NETTY_JARS demo/peers/NettyIdleServer.java \
//        --port 7000 --idle-ms 10000 [--reuseport] [--threads 1] [--http]
// (NETTY_JARS: /usr/share/java/netty-{common,buffer,transport,handler,codec}.jar)
// Prints "ready: listening on 127.0.0.1:PORT, pid PID" once bound.
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.StandardSocketOptions;
import java.util.concurrent.TimeUnit;

public final class NettyIdleServer {
    /** Close on the reader-idle event (IdleStateHandler: any read resets it) and on an error. */
    abstract static class CloseOnIdle extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent && ((IdleStateEvent) evt).state() == IdleState.READER_IDLE)
                ctx.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** Echo what is read. Shared by all connections. */
    @ChannelHandler.Sharable
    static final class Echo extends CloseOnIdle {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush((ByteBuf) msg);
        }
    }

    static final byte[] REPLY =
        "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** --http: a 204 for each complete request head; one per connection (the head's state). */
    static final class Http204 extends CloseOnIdle {
        private int len;         // bytes of the current head, 0 before its request line
        private boolean line;    // the current line has a byte other than CR

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            int heads = 0;
            try {
                for (int i = in.readerIndex(); i < in.writerIndex(); i++) {
                    byte ch = in.getByte(i);
                    if (len == 0 && (ch == '\r' || ch == '\n'))
                        continue;
                    if (++len > 1024) {
                        ctx.close();
                        return;
                    }
                    if (ch == '\n') {
                        if (!line) {
                            heads++;
                            len = 0;
                        }
                        line = false;
                    } else if (ch != '\r') {
                        line = true;
                    }
                }
            } finally {
                in.release();
            }
            if (heads > 0) {
                ByteBuf out = ctx.alloc().buffer(heads * REPLY.length);
                for (int k = 0; k < heads; k++)
                    out.writeBytes(REPLY);
                ctx.writeAndFlush(out);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int port = 7000, threads = 1;
        long idleMs = 10000;
        boolean reuseport = false, http = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[++i]); break;
                case "--idle-ms": idleMs = Long.parseLong(args[++i]); break;
                case "--threads": threads = Integer.parseInt(args[++i]); break;
                case "--reuseport": reuseport = true; break;
                case "--http": http = true; break;
                default:
                    System.err.println("NettyIdleServer: unknown option " + args[i]);
                    System.exit(2);
            }
        }
        final long idle = idleMs;
        final boolean httpMode = http;
        final Echo echo = new Echo();
        EventLoopGroup group = new NioEventLoopGroup(threads);
        ServerBootstrap b = new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 4096)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new IdleStateHandler(idle, 0, 0, TimeUnit.MILLISECONDS),
                                          httpMode ? new Http204() : echo);
                }
            });
        if (reuseport)
            b.option(NioChannelOption.of(StandardSocketOptions.SO_REUSEPORT), true);
        ChannelFuture f = b.bind("127.0.0.1", port).sync();
        System.out.println("ready: listening on 127.0.0.1:" + port + ", pid " + ProcessHandle.current().pid());
        System.out.flush();
        f.channel().closeFuture().sync();
    }
}
