package harvest.testcluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.thrift.TBoundedThreadPoolServer;
import org.apache.hadoop.hbase.thrift.ThriftServer;
import org.apache.hadoop.hbase.thrift.generated.Hbase;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TProtocolFactory;
import org.apache.thrift.server.TServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.TTransportFactory;

/**
 * HBase's own Thrift 1 server ({@link ThriftServer}: thread-pool server, binary protocol, unframed transport - its
 * defaults) on a fixed port, run on a thread of this JVM against the mini cluster's configuration.
 *
 * <p>The only thing changed from stock HBase is the listening socket: it remembers accepted connections, so that
 * {@link #stop()} cuts them the way a killed Thrift server process would (stock {@code stop()} only stops
 * accepting). Everything behind the socket - processor, handler, connection to HBase - is HBase's code.
 */
final class HBaseThrift {
    /** HBase's key for the Thrift server's socket read timeout, and its default. */
    static final String READ_TIMEOUT_KEY = "hbase.thrift.server.socket.read.timeout";
    static final int READ_TIMEOUT_DEFAULT_MS = 60_000;
    /** HBase's key for the Thrift info (web UI) port; -1 = no info server. */
    static final String INFO_PORT_KEY = "hbase.thrift.info.port";
    static final int NO_INFO_PORT = -1;
    static final int BACKLOG = 64;
    static final long BIND_RETRY_MS = 10_000;
    static final long BIND_RETRY_PAUSE_MS = 200;
    static final long STOP_JOIN_MS = 30_000;
    static final long READY_WAIT_MS = 120_000;
    static final long READY_POLL_MS = 250;
    static final int PROBE_TIMEOUT_MS = 5_000;

    private final int port;
    private final Configuration conf;
    private Server server;
    private Thread serveThread;

    HBaseThrift(int port, Configuration clusterConf) {
        this.port = port;
        this.conf = new Configuration(clusterConf);
        this.conf.setInt(INFO_PORT_KEY, NO_INFO_PORT);
    }

    /** Starts a new ThriftServer on the port and returns once a getTableNames call answers. */
    synchronized void start() throws IOException, InterruptedException {
        Server s = new Server(conf, port);
        String[] args = {"-port", Integer.toString(port), "start"};
        Thread t = new Thread(() -> {
            try {
                int rc = s.run(args);
                if (rc != 0) {
                    System.err.println(Main.PREFIX + " thrift server exited with " + rc);
                }
            } catch (Exception e) {
                System.err.println(Main.PREFIX + " thrift server failed: " + e);
                e.printStackTrace();
            }
        }, "hbase-thrift-serve");
        t.setDaemon(true);
        t.start();
        server = s;
        serveThread = t;
        waitUntilAnswering(t);
    }

    /** Stops accepting, cuts every open client connection and waits for the serve thread to end. */
    synchronized void stop() throws InterruptedException {
        if (server == null) {
            return;
        }
        server.stop();
        server.closeClients();
        serveThread.join(STOP_JOIN_MS);
        server = null;
        serveThread = null;
    }

    private void waitUntilAnswering(Thread serve) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + READY_WAIT_MS;
        Exception last = null;
        while (System.currentTimeMillis() < deadline) {
            if (!serve.isAlive()) {
                throw new IOException("thrift server thread ended before it answered", last);
            }
            try (TSocket socket = new TSocket(new TConfiguration(), Main.LOOPBACK, port, PROBE_TIMEOUT_MS)) {
                socket.open();
                Hbase.Client client = new Hbase.Client(new TBinaryProtocol(socket));
                client.getTableNames();
                return;
            } catch (Exception e) {
                last = e;
                Thread.sleep(READY_POLL_MS);
            }
        }
        throw new IOException("thrift server on port " + port + " did not answer getTableNames within "
                + READY_WAIT_MS + " ms", last);
    }

    /** Stock ThriftServer whose thread-pool server listens on a connection-tracking socket. */
    private static final class Server extends ThriftServer {
        private final int port;
        private volatile TrackingServerSocket socket;

        Server(Configuration conf, int port) {
            super(conf);
            this.port = port;
        }

        @Override
        protected TServer getTThreadPoolServer(TProtocolFactory protocolFactory, TProcessor processor,
                TTransportFactory transportFactory, InetSocketAddress inetSocketAddress) throws Exception {
            int readTimeout = conf.getInt(READ_TIMEOUT_KEY, READ_TIMEOUT_DEFAULT_MS);
            TrackingServerSocket transport = new TrackingServerSocket(bind(), readTimeout);
            socket = transport;
            TBoundedThreadPoolServer.Args args = new TBoundedThreadPoolServer.Args(transport, conf);
            args.processor(processor).transportFactory(transportFactory).protocolFactory(protocolFactory);
            return new TBoundedThreadPoolServer(args, metrics);
        }

        /** Binds the fixed port on loopback, retrying for a while in case a closing socket still holds it. */
        private ServerSocket bind() throws IOException, InterruptedException {
            long deadline = System.currentTimeMillis() + BIND_RETRY_MS;
            while (true) {
                ServerSocket s = new ServerSocket();
                s.setReuseAddress(true);
                try {
                    s.bind(new InetSocketAddress(Main.LOOPBACK, port), BACKLOG);
                    return s;
                } catch (IOException e) {
                    s.close();
                    if (System.currentTimeMillis() > deadline) {
                        throw e;
                    }
                    Thread.sleep(BIND_RETRY_PAUSE_MS);
                }
            }
        }

        void closeClients() {
            TrackingServerSocket s = socket;
            if (s != null) {
                s.close();
                s.closeClients();
            }
        }
    }

    /** A server socket that remembers its accepted connections so that they can be cut. */
    private static final class TrackingServerSocket extends TServerSocket {
        private final Set<TTransport> clients = ConcurrentHashMap.newKeySet();

        TrackingServerSocket(ServerSocket socket, int clientTimeout) throws TTransportException {
            super(socket, clientTimeout);
        }

        @Override
        public TSocket accept() throws TTransportException {
            TSocket client = super.accept();
            clients.removeIf(c -> !c.isOpen());
            clients.add(client);
            return client;
        }

        void closeClients() {
            for (TTransport c : clients) {
                c.close();
            }
            clients.clear();
        }
    }
}
