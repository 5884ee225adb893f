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
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedBlocks;

/**
 * Test cluster for harvest's cluster tests: a real HBase 2.6 mini cluster ({@link TestingHBaseCluster}: one HMaster,
 * one RegionServer, a MiniDFSCluster with one DataNode holding hbase.rootdir, a MiniZooKeeperCluster) and HBase's own
 * Thrift 1 server on top of it (thread-pool server, binary protocol, unframed), see {@link HBaseThrift}.
 *
 * <p>Usage: {@code Main <workdir> [--delete-on-exit] [--datanodes N] [--replication R] [--yarn]} (defaults: 1
 * DataNode, replication 1, no YARN). {@code --yarn} adds YARN and MapReduce on the same HDFS ({@link YarnCluster}).
 * Prints {@code HARVEST-TESTCLUSTER READY hdfs=... thrift=... zk=... thrift2=... namenode_http=... hbase_http=...}
 * (with {@code --yarn} also {@code yarn_rm=... yarn_web=... jhs=... jhs_web=... hadoop_conf=... hadoop=...
 * streaming_jar=... yarn_start_ms=...}) once every endpoint answers, then reads control commands on stdin, one a line, each answered by one
 * line:
 * <ul>
 *   <li>{@code restart-thrift} → {@code THRIFT-RESTARTED}</li>
 *   <li>{@code stop-datanode I} (index into the live DataNodes) → {@code DATANODE-STOPPED I 127.0.0.1:PORT}</li>
 *   <li>{@code datanodes-of PATH} (indexes of the live DataNodes holding the last block of an HDFS file, also one
 *       still being written) → {@code DATANODES-OF 0,2}</li>
 *   <li>{@code restart-namenode [DOWN_MS]} (NameNode stopped, down for DOWN_MS, started again on the same port, out
 *       of safe mode) → {@code NAMENODE-RESTARTED}</li>
 *   <li>{@code stop}</li>
 * </ul>
 * A command that fails answers {@code COMMAND-FAILED <command>: <error>}. EOF on stdin shuts the cluster down, so the
 * JVM never outlives the process that started it.
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
    static final String CMD_STOP_DATANODE = "stop-datanode";
    static final String CMD_DATANODES_OF = "datanodes-of";
    static final String CMD_RESTART_NAMENODE = "restart-namenode";
    static final String OPT_DATANODES = "--datanodes";
    static final String OPT_REPLICATION = "--replication";
    static final String OPT_YARN = "--yarn";
    /** Folder (in the work dir) of the Hadoop client files written with --yarn: etc/hadoop, bin/hadoop, tmp. */
    static final String HADOOP_HOME = "hadoop";
    static final String USAGE = "usage: harvest.testcluster.Main <workdir> [" + DELETE_ON_EXIT + "] ["
            + OPT_DATANODES + " N] [" + OPT_REPLICATION + " R] [" + OPT_YARN + "]";
    /** How long {@code restart-namenode} waits for the restarted NameNode to leave safe mode. */
    static final long SAFE_MODE_WAIT_MS = 60_000;

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
        if (args.length < 1) {
            System.err.println(USAGE);
            System.exit(2);
        }
        boolean deleteOnExit = false;
        int dataNodes = 1;
        int replication = 1;
        boolean yarn = false;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals(DELETE_ON_EXIT)) {
                deleteOnExit = true;
            } else if (args[i].equals(OPT_DATANODES) && i + 1 < args.length) {
                dataNodes = Integer.parseInt(args[++i]);
            } else if (args[i].equals(OPT_REPLICATION) && i + 1 < args.length) {
                replication = Integer.parseInt(args[++i]);
            } else if (args[i].equals(OPT_YARN)) {
                yarn = true;
            } else {
                System.err.println(USAGE);
                System.exit(2);
            }
        }
        if (dataNodes < 1 || replication < 1 || replication > dataNodes) {
            throw new IllegalArgumentException("need 1 <= replication (" + replication + ") <= DataNodes ("
                    + dataNodes + ")");
        }
        File work = new File(args[0]).getAbsoluteFile();
        if (!work.isDirectory() && !work.mkdirs()) {
            throw new IOException("cannot create work dir " + work);
        }

        long started = System.currentTimeMillis();
        System.setProperty(TEST_DATA_PROPERTY, new File(work, "data").getPath());
        int masterInfoPort = freePort();
        TestingHBaseCluster hbase = TestingHBaseCluster.create(TestingHBaseClusterOption.builder()
                .conf(clusterConf(masterInfoPort, replication))
                .numMasters(1)
                .numRegionServers(1)
                .numDataNodes(dataNodes)
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
        MiniDFSCluster dfs = dfsCluster(hbase);
        InetSocketAddress nameNodeHttp = dfs.getNameNode().getHttpAddress();
        int thrift2Port = freePort();
        HBaseThrift2 thrift2 = new HBaseThrift2(thrift2Port, conf);
        thrift2.start();

        waitForPort(nameNodePort);
        waitForPort(zkPort);
        System.err.println(PREFIX + " hbase.rootdir=" + conf.get(ROOT_DIR_KEY) + " datanodes=" + dataNodes
                + " replication=" + replication + " started in " + (System.currentTimeMillis() - started) + " ms");
        String yarnFields = "";
        YarnCluster yarnCluster = null;
        if (yarn) {
            String streamingJar = YarnCluster.streamingJar();
            yarnCluster = YarnCluster.start(conf, new File(work, HADOOP_HOME), replication);
            yarnFields = yarnCluster.readyFields(streamingJar);
            System.err.println(PREFIX + " yarn started in " + yarnCluster.startMs + " ms");
        }
        YarnCluster mapReduce = yarnCluster;

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
                long t1 = System.currentTimeMillis();
                hbase.stop();
                System.err.println(PREFIX + " hbase stopped in " + (System.currentTimeMillis() - t1) + " ms");
                long t0 = System.currentTimeMillis();
                if (mapReduce != null) {
                    mapReduce.stop();
                    System.err.println(PREFIX + " yarn stopped in " + (System.currentTimeMillis() - t0) + " ms");
                }
            } catch (Exception e) {
                System.err.println(PREFIX + " shutdown failed: " + e);
            }
        };

        System.out.println(PREFIX + " READY hdfs=" + hdfsUrl + " thrift=" + LOOPBACK + ":" + thriftPort + " zk="
                + LOOPBACK + ":" + zkPort + " thrift2=" + LOOPBACK + ":" + thrift2Port + " namenode_http="
                + LOOPBACK + ":" + nameNodeHttp.getPort() + " hbase_http=" + LOOPBACK + ":" + masterInfoPort
                + yarnFields);
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.equals(CMD_STOP)) {
                break;
            } else if (cmd.isEmpty()) {
                continue;
            }
            String answer;
            try {
                answer = control(cmd, thrift, dfs);
            } catch (Exception e) {
                e.printStackTrace();
                answer = "COMMAND-FAILED " + cmd + ": " + e.toString().replace('\n', ' ');
            }
            System.out.println(PREFIX + " " + answer);
            System.out.flush();
        }
        shutdown.run();
        if (deleteOnExit) {
            deleteTree(work);
        }
        System.out.println(PREFIX + " STOPPED");
        System.out.flush();
        System.exit(0);
    }

    /** Runs one control command other than {@code stop}; returns the answer (without the prefix). */
    private static String control(String cmd, HBaseThrift thrift, MiniDFSCluster dfs) throws Exception {
        String[] words = cmd.split("\\s+", 2);
        String arg = words.length > 1 ? words[1].trim() : "";
        switch (words[0]) {
            case CMD_RESTART_THRIFT:
                thrift.stop();
                thrift.start();
                return "THRIFT-RESTARTED";
            case CMD_STOP_DATANODE: {
                int index = Integer.parseInt(arg);
                if (index < 0 || index >= dfs.getDataNodes().size()) {
                    throw new IllegalArgumentException("no live DataNode " + index + " (live: "
                            + dfs.getDataNodes().size() + ")");
                }
                String addr = LOOPBACK + ":" + dfs.getDataNodes().get(index).getXferPort();
                // Stops the DataNode's server and its sockets at once, as a killed process would; the NameNode
                // marks it dead after the heartbeat recheck (clusterConf).
                if (dfs.stopDataNode(index) == null) {
                    throw new IllegalStateException("stopDataNode(" + index + ") found no DataNode");
                }
                return "DATANODE-STOPPED " + index + " " + addr;
            }
            case CMD_DATANODES_OF: {
                LocatedBlocks blocks = dfs.getFileSystem().getClient().getLocatedBlocks(arg, 0);
                LocatedBlock last = blocks.getLastLocatedBlock();
                if (last == null) {
                    throw new IllegalStateException(arg + " has no blocks");
                }
                StringBuilder out = new StringBuilder();
                for (DatanodeInfo loc : last.getLocations()) {
                    for (int i = 0; i < dfs.getDataNodes().size(); i++) {
                        if (dfs.getDataNodes().get(i).getXferPort() == loc.getXferPort()) {
                            out.append(out.length() == 0 ? "" : ",").append(i);
                        }
                    }
                }
                return "DATANODES-OF " + out;
            }
            case CMD_RESTART_NAMENODE: {
                long downMs = arg.isEmpty() ? 0 : Long.parseLong(arg);
                dfs.shutdownNameNode(0);
                Thread.sleep(downMs);
                // Same ports (MiniDFSCluster keeps the bound addresses in the NameNode's configuration).
                dfs.restartNameNode(0, true);
                long deadline = System.currentTimeMillis() + SAFE_MODE_WAIT_MS;
                while (dfs.getNameNode().getNamesystem().isInSafeMode()) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("NameNode still in safe mode after " + SAFE_MODE_WAIT_MS
                                + " ms");
                    }
                    Thread.sleep(100);
                }
                return "NAMENODE-RESTARTED";
            }
            default:
                return "UNKNOWN-COMMAND " + cmd;
        }
    }

    /**
     * The MiniDFSCluster under the HBase mini cluster. TestingHBaseCluster does not expose it, so this reads it from
     * the implementation's testing utility.
     */
    private static MiniDFSCluster dfsCluster(TestingHBaseCluster hbase) throws ReflectiveOperationException {
        java.lang.reflect.Field field = hbase.getClass().getDeclaredField("util");
        field.setAccessible(true);
        HBaseTestingUtility util = (HBaseTestingUtility) field.get(hbase);
        return util.getDFSCluster();
    }

    /** HBase/HDFS settings for a small test cluster on loopback with free ports only. */
    private static Configuration clusterConf(int masterInfoPort, int replication) {
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
        conf.set("dfs.replication", Integer.toString(replication));
        // A restarted NameNode leaves safe mode as soon as the DataNodes have reported their blocks.
        conf.set("dfs.namenode.safemode.extension", "0");
        conf.set("dfs.permissions.enabled", "false");
        // Fast heartbeats: this is a test cluster.
        conf.set("dfs.heartbeat.interval", "1");
        conf.set("dfs.namenode.heartbeat.recheck-interval", "5000");
        // As recommended for production (deploy/cluster/hdfs-site.xml): new blocks avoid a DataNode that missed
        // heartbeats for the stale interval, before it is marked dead (~20 s here). 10 s (>= 3 heartbeats, Hadoop's
        // minimum) keeps a window in which clients still get the stopped DataNode (cluster_faults part (a)).
        conf.set("dfs.namenode.avoid.write.stale.datanode", "true");
        conf.set("dfs.namenode.stale.datanode.interval", "10000");
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
