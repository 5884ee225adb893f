package harvest.testcluster;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.testing.TestingHBaseCluster;
import org.apache.hadoop.hbase.testing.TestingHBaseClusterOption;

/**
 * Test cluster for harvest's cluster tests: a real HBase 2.6 mini cluster ({@link TestingHBaseCluster}: one HMaster,
 * one RegionServer, a MiniDFSCluster with one DataNode holding hbase.rootdir, a MiniZooKeeperCluster) and HBase's own
 * Thrift 1 server on top of it (thread-pool server, binary protocol, unframed), see {@link HBaseThrift}.
 *
 * <p>Prints {@code HARVEST-TESTCLUSTER READY hdfs=... thrift=... zk=... thrift2=... namenode_http=...
 * hbase_http=...} once every endpoint answers, then reads
 * control commands on stdin: {@code restart-thrift}, {@code stop}. EOF on stdin shuts the cluster down, so the JVM
 * never outlives the process that started it.
 */
public final class Main {
    static final String PREFIX = "HARVEST-TESTCLUSTER";
    static final String LOOPBACK = "127.0.0.1";
    static final String HBASE_ROOT = "/hbase";
    static final int CONNECT_TIMEOUT_MS = 1000;
    static final long READY_WAIT_MS = 60_000;
    static final long SHUTDOWN_GRACE_MS = 20_000;
    /** HBaseTestingUtility puts its local data (DFS blocks, ZooKeeper, logs) under this system property's folder. */
    static final String TEST_DATA_PROPERTY = "test.build.data.basedirectory";
    static final String ZK_PORT_KEY = "hbase.zookeeper.property.clientPort";
    static final String ROOT_DIR_KEY = "hbase.rootdir";
    static final String FS_KEY = "fs.defaultFS";
    static final String DELETE_ON_EXIT = "--delete-on-exit";
    static final String CMD_STOP = "stop";
    static final String CMD_RESTART_THRIFT = "restart-thrift";

    private Main() {}

    /** Entry point; any startup failure ends the JVM with status 1 (Hadoop's non-daemon threads would keep it). */
    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            System.err.println(PREFIX + " FAILED " + t);
            t.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
    }

    private static void run(String[] args) throws Exception {
        boolean deleteOnExit = args.length == 2 && args[1].equals(DELETE_ON_EXIT);
        if (args.length < 1 || args.length > 2 || (args.length == 2 && !deleteOnExit)) {
            System.err.println("usage: harvest.testcluster.Main <workdir> [" + DELETE_ON_EXIT + "]");
            System.exit(2);
        }
        File work = new File(args[0]).getAbsoluteFile();
        if (!work.isDirectory() && !work.mkdirs()) {
            throw new IOException("cannot create work dir " + work);
        }

        long started = System.currentTimeMillis();
        System.setProperty(TEST_DATA_PROPERTY, new File(work, "data").getPath());
        int masterInfoPort = freePort();
        TestingHBaseCluster hbase = TestingHBaseCluster.create(TestingHBaseClusterOption.builder()
                .conf(clusterConf(masterInfoPort))
                .numMasters(1)
                .numRegionServers(1)
                .numDataNodes(1)
                .numZkServers(1)
                .build());
        hbase.start();
        Configuration conf = hbase.getConf();
        URI fs = URI.create(conf.get(FS_KEY));
        int nameNodePort = fs.getPort();
        String hdfsUrl = "hdfs://" + LOOPBACK + ":" + nameNodePort;
        int zkPort = conf.getInt(ZK_PORT_KEY, -1);
        // The contract promises a /hbase folder on the HDFS; HBase's own root dir is printed below.
        FileSystem.get(conf).mkdirs(new Path(HBASE_ROOT));

        int thriftPort = freePort();
        HBaseThrift thrift = new HBaseThrift(thriftPort, conf);
        thrift.start();
        InetSocketAddress nameNodeHttp = nameNodeHttpAddress(hbase);
        int thrift2Port = freePort();
        HBaseThrift2 thrift2 = new HBaseThrift2(thrift2Port, conf);
        thrift2.start();

        waitForPort(nameNodePort);
        waitForPort(zkPort);
        System.err.println(PREFIX + " hbase.rootdir=" + conf.get(ROOT_DIR_KEY) + " started in "
                + (System.currentTimeMillis() - started) + " ms");

        Runnable shutdown = () -> {
            Thread watchdog = new Thread(() -> {
                try {
                    Thread.sleep(SHUTDOWN_GRACE_MS);
                } catch (InterruptedException e) {
                    return;
                }
                System.err.println(PREFIX + " shutdown took too long, halting");
                Runtime.getRuntime().halt(1);
            }, "shutdown-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            try {
                thrift.stop();
                thrift2.stop();
                hbase.stop();
            } catch (Exception e) {
                System.err.println(PREFIX + " shutdown failed: " + e);
            }
        };

        System.out.println(PREFIX + " READY hdfs=" + hdfsUrl + " thrift=" + LOOPBACK + ":" + thriftPort + " zk="
                + LOOPBACK + ":" + zkPort + " thrift2=" + LOOPBACK + ":" + thrift2Port + " namenode_http="
                + LOOPBACK + ":" + nameNodeHttp.getPort() + " hbase_http=" + LOOPBACK + ":" + masterInfoPort);
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.equals(CMD_STOP)) {
                break;
            } else if (cmd.equals(CMD_RESTART_THRIFT)) {
                thrift.stop();
                thrift.start();
                System.out.println(PREFIX + " THRIFT-RESTARTED");
                System.out.flush();
            } else if (!cmd.isEmpty()) {
                System.out.println(PREFIX + " UNKNOWN-COMMAND " + cmd);
                System.out.flush();
            }
        }
        shutdown.run();
        if (deleteOnExit) {
            deleteTree(work);
        }
        System.out.println(PREFIX + " STOPPED");
        System.out.flush();
        System.exit(0);
    }

    /** HBase/HDFS settings for a small test cluster on loopback with free ports only. */
    /**
     * The NameNode's web address. MiniDFSCluster picks its own port, and TestingHBaseCluster does not expose the
     * MiniDFSCluster, so this reads it from the implementation's testing utility.
     */
    private static InetSocketAddress nameNodeHttpAddress(TestingHBaseCluster hbase) throws ReflectiveOperationException {
        java.lang.reflect.Field field = hbase.getClass().getDeclaredField("util");
        field.setAccessible(true);
        HBaseTestingUtility util = (HBaseTestingUtility) field.get(hbase);
        return util.getDFSCluster().getNameNode().getHttpAddress();
    }

    private static Configuration clusterConf(int masterInfoPort) {
        Configuration conf = HBaseConfiguration.create();
        // Free ports only (0 = any), everything on loopback. The NameNode's and the master's web servers run on
        // ports picked here (their JMX pages give `harvest cluster check` the versions and the capacity); the
        // region server has no web UI (-1).
        conf.setInt("hbase.master.port", 0);
        conf.setInt("hbase.master.info.port", masterInfoPort);
        conf.set("hbase.master.info.bindAddress", LOOPBACK);
        conf.setInt("hbase.regionserver.port", 0);
        conf.setInt("hbase.regionserver.info.port", -1);
        conf.set("hbase.regionserver.hostname", LOOPBACK);
        conf.set("hbase.master.hostname", LOOPBACK);
        conf.set("dfs.namenode.http-address", LOOPBACK + ":0");
        conf.set("dfs.datanode.address", LOOPBACK + ":0");
        conf.set("dfs.datanode.http.address", LOOPBACK + ":0");
        conf.set("dfs.datanode.ipc.address", LOOPBACK + ":0");
        conf.set("dfs.replication", "1");
        conf.set("dfs.permissions.enabled", "false");
        // Fast heartbeats: this is a test cluster.
        conf.set("dfs.heartbeat.interval", "1");
        conf.set("dfs.namenode.heartbeat.recheck-interval", "5000");
        // Writers that die keep their lease for the soft limit (60 s by default): keep it short for lease tests.
        conf.set("dfs.namenode.lease-recheck-interval-ms", "1000");
        return conf;
    }

    private static void deleteTree(File f) {
        File[] children = f.listFiles();
        if (children != null) {
            for (File c : children) {
                deleteTree(c);
            }
        }
        if (!f.delete()) {
            System.err.println(PREFIX + " could not delete " + f);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(LOOPBACK, 0));
            return s.getLocalPort();
        }
    }

    static void waitForPort(int port) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + READY_WAIT_MS;
        IOException last = null;
        while (System.currentTimeMillis() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(LOOPBACK, port), CONNECT_TIMEOUT_MS);
                return;
            } catch (IOException e) {
                last = e;
                Thread.sleep(100);
            }
        }
        throw new IOException("port " + port + " did not answer within " + READY_WAIT_MS + " ms", last);
    }
}
