package harvest.testcluster;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.thrift2.ThriftServer;
import org.apache.hadoop.hbase.thrift2.generated.THBaseService;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

/**
 * HBase's Thrift 2 server (THBaseService: binary protocol, unframed, thread pool) on a loopback port. harvest uses
 * it only for what Thrift 1 cannot do: creating a table pre-split at given keys.
 */
final class HBaseThrift2 {
    /** HBase's keys for the Thrift server's bind address and info port. */
    static final String BIND_KEY = "hbase.regionserver.thrift.ipaddress";
    static final String INFO_PORT_KEY = "hbase.thrift.info.port";
    static final int NO_INFO_PORT = -1;
    static final long READY_WAIT_MS = 120_000;
    static final long READY_POLL_MS = 250;
    static final int PROBE_TIMEOUT_MS = 5_000;

    private final int port;
    private final Configuration conf;
    private ThriftServer server;
    private Thread serveThread;

    HBaseThrift2(int port, Configuration clusterConf) {
        this.port = port;
        this.conf = new Configuration(clusterConf);
        this.conf.setInt(INFO_PORT_KEY, NO_INFO_PORT);
        this.conf.set(BIND_KEY, Main.LOOPBACK);
    }

    /** Starts the server and returns once getThriftServerType answers. */
    synchronized void start() throws IOException, InterruptedException {
        ThriftServer s = new ThriftServer(conf);
        String[] args = {"-port", Integer.toString(port), "start"};
        Thread t = new Thread(() -> {
            try {
                int rc = s.run(args);
                if (rc != 0) {
                    System.err.println(Main.PREFIX + " thrift2 server exited with " + rc);
                }
            } catch (Exception e) {
                System.err.println(Main.PREFIX + " thrift2 server failed: " + e);
                e.printStackTrace();
            }
        }, "hbase-thrift2-serve");
        t.setDaemon(true);
        t.start();
        server = s;
        serveThread = t;
        long deadline = System.currentTimeMillis() + READY_WAIT_MS;
        Exception last = null;
        while (System.currentTimeMillis() < deadline) {
            if (!t.isAlive()) {
                throw new IOException("thrift2 server thread ended before it answered", last);
            }
            try (TSocket socket = new TSocket(new TConfiguration(), Main.LOOPBACK, port, PROBE_TIMEOUT_MS)) {
                socket.open();
                new THBaseService.Client(new TBinaryProtocol(socket)).getThriftServerType();
                return;
            } catch (Exception e) {
                last = e;
                Thread.sleep(READY_POLL_MS);
            }
        }
        throw new IOException("thrift2 server on port " + port + " did not answer within " + READY_WAIT_MS + " ms",
                last);
    }

    synchronized void stop() throws InterruptedException {
        if (server == null) {
            return;
        }
        server.stop();
        serveThread.join(HBaseThrift.STOP_JOIN_MS);
        server = null;
        serveThread = null;
    }
}
