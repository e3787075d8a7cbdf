// SPDX-License-Identifier: MIT
//
// demo/peers/NettyIdleServer.java - the idle-timeout TCP echo server on
// Netty (Debian's libnetty-java), as a Netty user writes it: an
// IdleStateHandler per connection closes it after --idle-ms without a read;
// every byte read is echoed. The peer of idle-server-c under idle-load
// (--no-stats: it has no STATS line), run by scripts/demo-peers.sh.
//
// One process holds at most RLIMIT_NOFILE connections: --reuseport lets
// several processes share the port (NIO, SO_REUSEPORT), as the demo's
// --workers do. One NIO event loop thread (--threads) by default, as the
// demo's worker has one loop.
//
//   java -cp NETTY_JARS demo/peers/NettyIdleServer.java \
//        --port 7000 --idle-ms 10000 [--reuseport] [--threads 1]
// (NETTY_JARS: /usr/share/java/netty-{common,buffer,transport,handler,codec}.jar)
// Prints "ready: listening on 127.0.0.1:PORT, pid PID" once bound.
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
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
    /** Echo what is read; close on the reader-idle event. Shared by all connections. */
    @ChannelHandler.Sharable
    static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush((ByteBuf) msg);
        }

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

    public static void main(String[] args) throws Exception {
        int port = 7000, threads = 1;
        long idleMs = 10000;
        boolean reuseport = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[++i]); break;
                case "--idle-ms": idleMs = Long.parseLong(args[++i]); break;
                case "--threads": threads = Integer.parseInt(args[++i]); break;
                case "--reuseport": reuseport = true; break;
                default:
                    System.err.println("NettyIdleServer: unknown option " + args[i]);
                    System.exit(2);
            }
        }
        final long idle = idleMs;
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
                    ch.pipeline().addLast(new IdleStateHandler(idle, 0, 0, TimeUnit.MILLISECONDS), echo);
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
