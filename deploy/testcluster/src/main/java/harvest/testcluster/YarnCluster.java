package harvest.testcluster;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import com.google.inject.servlet.GuiceFilter;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.mapreduce.v2.util.MRWebAppUtil;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.webapp.WebApp;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/**
 * YARN and MapReduce on the test cluster's MiniDFS: {@link MiniMRYarnCluster} (one ResourceManager, one NodeManager,
 * the MapReduce JobHistoryServer) in this JVM, plus what a Hadoop client needs to submit jobs to it: a configuration
 * folder ({@code etc/hadoop}: core-, hdfs-, yarn-, mapred-site.xml, log4j.properties) and a {@code bin/hadoop}
 * launcher for {@code hadoop jar} and {@code hadoop fs}.
 *
 * <p>The RM, NM and JHS servers bind 127.0.0.1 ({@code *.bind-host}) on free ports. Containers run with the
 * DefaultContainerExecutor as this user; their class path is this JVM's (named in {@code yarn.application.classpath},
 * as a real cluster names its Hadoop jars), their JVMs get the Java 17 opens Hadoop needs.
 */
final class YarnCluster {
    /** NodeManager memory: the AM (512 MB) and two task containers (384 MB each) fit, a fourth container waits. */
    static final int NM_MEMORY_MB = 1536;
    static final int NM_VCORES = 4;
    static final int MIN_ALLOCATION_MB = 128;
    static final int AM_MB = 512;
    static final int TASK_MB = 384;
    /** Heap of the container JVMs: container size minus room for metaspace, threads and native memory. */
    static final String AM_HEAP = "-Xmx384m";
    static final String TASK_HEAP = "-Xmx256m";
    /** Java 17: Hadoop's AM and task code reflects into java.lang (without it the AM fails at start). */
    static final String JAVA17_OPENS = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    /** Container JVMs live seconds: skip the optimizing compiler and parallel GC threads. */
    static final String SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true";
    static final String STAGING_DIR = "/tmp/hadoop-yarn/staging";
    static final long NM_CONNECT_WAIT_MS = 60_000;
    /** Heap of the client JVMs the launcher starts (hadoop jar / hadoop fs). */
    static final String CLIENT_HEAP = "-Xmx512m";

    final MiniMRYarnCluster mr;
    final String resourceManager;
    final String resourceManagerWeb;
    final String jobHistory;
    final String jobHistoryWeb;
    final File confDir;
    final File launcher;
    final long startMs;

    private YarnCluster(MiniMRYarnCluster mr, String resourceManager, String resourceManagerWeb, String jobHistory,
            String jobHistoryWeb, File confDir, File launcher, long startMs) {
        this.mr = mr;
        this.resourceManager = resourceManager;
        this.resourceManagerWeb = resourceManagerWeb;
        this.jobHistory = jobHistory;
        this.jobHistoryWeb = jobHistoryWeb;
        this.confDir = confDir;
        this.launcher = launcher;
        this.startMs = startMs;
    }

    /**
     * Starts YARN + MapReduce on the HDFS of {@code base} (the HBase mini cluster's configuration) and writes the
     * client files under {@code home} ({@code etc/hadoop}, {@code bin/hadoop}, {@code tmp}).
     */
    static YarnCluster start(Configuration base, File home, int replication) throws Exception {
        long started = System.currentTimeMillis();
        // The mini cluster names its NameNode "localhost"; clients get the address the ready line gives.
        String fs = "hdfs://" + Main.LOOPBACK + ":" + java.net.URI.create(base.get("fs.defaultFS")).getPort();
        File confDir = new File(home, "etc/hadoop");
        File tmp = new File(home, "tmp");
        if (!confDir.mkdirs() || !tmp.mkdirs()) {
            throw new IOException("cannot create " + confDir + " and " + tmp);
        }
        String classPath = System.getProperty("java.class.path");
        // The class path containers start with: the client configuration first (as HADOOP_CONF_DIR is on a real
        // cluster), then this JVM's jars; commas separate entries in yarn.application.classpath.
        String appClassPath = confDir.getAbsolutePath() + "," + classPath.replace(File.pathSeparatorChar, ',');

        Configuration conf = new YarnConfiguration(base);
        conf.set(YarnConfiguration.RM_BIND_HOST, Main.LOOPBACK);
        conf.set(YarnConfiguration.NM_BIND_HOST, Main.LOOPBACK);
        conf.set("mapreduce.jobhistory.bind-host", Main.LOOPBACK);
        conf.set(YarnConfiguration.TIMELINE_SERVICE_BIND_HOST, Main.LOOPBACK);
        conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, NM_MEMORY_MB);
        conf.setInt(YarnConfiguration.NM_PMEM_MB, NM_MEMORY_MB);
        conf.setInt(YarnConfiguration.NM_VCORES, NM_VCORES);
        conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, MIN_ALLOCATION_MB);
        conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, NM_MEMORY_MB);
        // The AM alone is a third of the node: let it start (CapacityScheduler's default AM share is 10 %).
        conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
        // A nearly full disk must not take the only NodeManager out of service.
        conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.5f);
        // Containers need JAVA_HOME (their command is $JAVA_HOME/bin/java); this JVM's own, whatever the env says.
        conf.set(YarnConfiguration.NM_ADMIN_USER_ENV, "MALLOC_ARENA_MAX=2,JAVA_HOME=" + System.getProperty("java.home"));
        conf.set(YarnConfiguration.YARN_APPLICATION_CLASSPATH, appClassPath);
        conf.set("yarn.app.mapreduce.am.staging-dir", STAGING_DIR);
        conf.set("hadoop.tmp.dir", tmp.getAbsolutePath());
        Map<String, String> mapred = mapredSite(confDir, appClassPath, replication);
        mapred.forEach(conf::set);

        MiniMRYarnCluster mr = new MiniMRYarnCluster("harvest-yarn", 1);
        mr.init(conf);
        mr.start();
        if (!mr.waitForNodeManagersToConnect(NM_CONNECT_WAIT_MS)) {
            mr.stop();
            throw new IOException("the NodeManager did not register within " + NM_CONNECT_WAIT_MS + " ms");
        }
        routeWebToResourceManager(mr);
        Configuration live = mr.getConfig();
        String rm = loopback(live.get(YarnConfiguration.RM_ADDRESS));
        String scheduler = loopback(live.get(YarnConfiguration.RM_SCHEDULER_ADDRESS));
        String tracker = loopback(live.get(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS));
        String admin = loopback(live.get(YarnConfiguration.RM_ADMIN_ADDRESS));
        String rmWeb = loopback(WebAppUtils.getRMWebAppURLWithoutScheme(live));
        String jhs = loopback(live.get("mapreduce.jobhistory.address"));
        String jhsWeb = loopback(MRWebAppUtil.getJHSWebappURLWithoutScheme(live));

        Map<String, String> core = new TreeMap<>();
        core.put("fs.defaultFS", fs);
        core.put("hadoop.tmp.dir", tmp.getAbsolutePath());
        writeSite(new File(confDir, "core-site.xml"), core);

        Map<String, String> hdfs = new TreeMap<>();
        hdfs.put("dfs.replication", Integer.toString(replication));
        writeSite(new File(confDir, "hdfs-site.xml"), hdfs);

        Map<String, String> yarn = new TreeMap<>();
        yarn.put(YarnConfiguration.RM_ADDRESS, rm);
        yarn.put(YarnConfiguration.RM_SCHEDULER_ADDRESS, scheduler);
        yarn.put(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, tracker);
        yarn.put(YarnConfiguration.RM_ADMIN_ADDRESS, admin);
        yarn.put(YarnConfiguration.RM_WEBAPP_ADDRESS, rmWeb);
        yarn.put(YarnConfiguration.YARN_APPLICATION_CLASSPATH, appClassPath);
        writeSite(new File(confDir, "yarn-site.xml"), yarn);

        mapred.put("mapreduce.jobhistory.address", jhs);
        mapred.put("mapreduce.jobhistory.webapp.address", jhsWeb);
        writeSite(new File(confDir, "mapred-site.xml"), mapred);

        writeLog4j(new File(confDir, "log4j.properties"));
        File launcher = writeLauncher(new File(home, "bin/hadoop"), confDir, classPath);
        return new YarnCluster(mr, rm, rmWeb, jhs, jhsWeb, confDir, launcher, System.currentTimeMillis() - started);
    }

    /**
     * Hadoop's web servers (RM, NM, JHS) share one static Guice pipeline per JVM (their {@code guice} filter is
     * Guice's no-argument {@link GuiceFilter}): the web app started last (the JobHistoryServer's) answers on all of
     * them, so the RM's pages and REST API ({@code /ws/v1/cluster/...}) would answer 404. This points the shared
     * pipeline back at the ResourceManager's (the one clients query); the NM's and the JHS's web servers then serve
     * the RM's pages too. Their RPC servers are unaffected.
     */
    private static void routeWebToResourceManager(MiniMRYarnCluster mr) throws ReflectiveOperationException {
        ResourceManager rm = mr.getResourceManager();
        Method getWebapp = ResourceManager.class.getDeclaredMethod("getWebapp");
        getWebapp.setAccessible(true);
        WebApp webApp = (WebApp) getWebapp.invoke(rm);
        Field filterField = WebApp.class.getDeclaredField("guiceFilter");
        filterField.setAccessible(true);
        GuiceFilter rmFilter = (GuiceFilter) filterField.get(webApp);
        Field injected = GuiceFilter.class.getDeclaredField("injectedPipeline");
        injected.setAccessible(true);
        Object pipeline = injected.get(rmFilter);
        Field shared = GuiceFilter.class.getDeclaredField("pipeline");
        shared.setAccessible(true);
        shared.set(null, pipeline);
    }

    /** The MapReduce settings both the cluster and its clients use (the client's decide the containers). */
    private static Map<String, String> mapredSite(File confDir, String appClassPath, int replication) {
        Map<String, String> m = new TreeMap<>();
        m.put("mapreduce.framework.name", "yarn");
        m.put("yarn.app.mapreduce.am.staging-dir", STAGING_DIR);
        m.put("yarn.app.mapreduce.am.resource.mb", Integer.toString(AM_MB));
        m.put("yarn.app.mapreduce.am.command-opts", AM_HEAP + " " + JAVA17_OPENS + " " + SHORT_JVM);
        m.put("mapreduce.map.memory.mb", Integer.toString(TASK_MB));
        m.put("mapreduce.reduce.memory.mb", Integer.toString(TASK_MB));
        m.put("mapreduce.map.java.opts", TASK_HEAP + " " + JAVA17_OPENS + " " + SHORT_JVM);
        m.put("mapreduce.reduce.java.opts", TASK_HEAP + " " + JAVA17_OPENS + " " + SHORT_JVM);
        // The framework's own jars are in yarn.application.classpath; this only replaces the default, which
        // names $HADOOP_MAPRED_HOME (unset here).
        m.put("mapreduce.application.classpath", confDir.getAbsolutePath());
        m.put("mapreduce.client.submit.file.replication", Integer.toString(replication));
        return m;
    }

    /** "localhost:P" or "0.0.0.0:P" as configured by the mini cluster → "127.0.0.1:P". */
    static String loopback(String address) {
        InetSocketAddress a = NetUtils.createSocketAddr(address);
        return Main.LOOPBACK + ":" + a.getPort();
    }

    private static void writeSite(File file, Map<String, String> values) throws IOException {
        Configuration c = new Configuration(false);
        values.forEach((k, v) -> c.set(k, v, "harvest-testcluster"));
        try (OutputStream out = new FileOutputStream(file)) {
            c.writeXml(out);
        }
    }

    /** As Hadoop's own conf/log4j.properties: INFO to stderr (job progress and counters of `hadoop jar`). */
    private static void writeLog4j(File file) throws IOException {
        String text = String.join("\n",
                "hadoop.root.logger=INFO,console",
                "log4j.rootLogger=${hadoop.root.logger}",
                "log4j.appender.console=org.apache.log4j.ConsoleAppender",
                "log4j.appender.console.target=System.err",
                "log4j.appender.console.layout=org.apache.log4j.PatternLayout",
                "log4j.appender.console.layout.ConversionPattern=%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n",
                "log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR",
                "");
        Files.writeString(file.toPath(), text, StandardCharsets.UTF_8);
    }

    /**
     * {@code bin/hadoop}: the subset of Hadoop's launcher a client uses, with this JVM's class path (Hadoop 3.3.5) and
     * the configuration folder: {@code hadoop jar JAR [MAINCLASS] ARGS...} (RunJar), {@code hadoop fs ARGS...}
     * (FsShell), {@code hadoop classpath}, {@code hadoop version}. Honours HADOOP_CONF_DIR, HADOOP_CLASSPATH and
     * HADOOP_CLIENT_OPTS like the real one.
     */
    private static File writeLauncher(File file, File confDir, String classPath) throws IOException {
        if (!file.getParentFile().mkdirs()) {
            throw new IOException("cannot create " + file.getParentFile());
        }
        List<String> flags = new ArrayList<>();
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-") || arg.startsWith("-Dorg.apache.hbase.thirdparty")) {
                flags.add(arg);
            }
        }
        flags.add(CLIENT_HEAP);
        flags.addAll(List.of(SHORT_JVM.split(" ")));
        String java = new File(System.getProperty("java.home"), "bin/java").getAbsolutePath();
        String text = String.join("\n",
                "#!/usr/bin/env bash",
                "# `hadoop` for the harvest test cluster (written by harvest.testcluster.Main, Hadoop 3.3.5):",
                "#   hadoop jar JAR [MAINCLASS] ARGS... | hadoop fs ARGS... | hadoop classpath | hadoop version",
                "set -euo pipefail",
                "HADOOP_CONF_DIR=\"${HADOOP_CONF_DIR:-" + confDir.getAbsolutePath() + "}\"",
                "export HADOOP_CONF_DIR",
                "cp=\"$HADOOP_CONF_DIR:" + classPath + "\"",
                "if [ -n \"${HADOOP_CLASSPATH:-}\" ]; then cp=\"$cp:$HADOOP_CLASSPATH\"; fi",
                "flags=(" + String.join(" ", flags) + ")",
                "case \"${1:-}\" in",
                "  jar) shift; class=org.apache.hadoop.util.RunJar ;;",
                "  fs) shift; class=org.apache.hadoop.fs.FsShell ;;",
                "  version) shift; class=org.apache.hadoop.util.VersionInfo ;;",
                "  classpath) echo \"$cp\"; exit 0 ;;",
                "  *) echo 'usage: hadoop jar JAR [MAINCLASS] ARGS... | fs ARGS... | classpath | version' >&2; exit 1 ;;",
                "esac",
                "# shellcheck disable=SC2086",
                "exec " + java + " \"${flags[@]}\" ${HADOOP_CLIENT_OPTS:-} -cp \"$cp\" \"$class\" \"$@\"",
                "");
        Files.writeString(file.toPath(), text, StandardCharsets.UTF_8);
        if (!file.setExecutable(true, false)) {
            throw new IOException("cannot make " + file + " executable");
        }
        return file;
    }

    /** The ready line's YARN part (keys parsed by the Rust guard). */
    String readyFields(String streamingJar) {
        return " yarn_rm=" + resourceManager + " yarn_web=" + resourceManagerWeb + " jhs=" + jobHistory + " jhs_web="
                + jobHistoryWeb + " hadoop_conf=" + confDir.getAbsolutePath() + " hadoop=" + launcher.getAbsolutePath()
                + " streaming_jar=" + streamingJar + " yarn_start_ms=" + startMs;
    }

    /** The hadoop-streaming jar on this JVM's class path. */
    static String streamingJar() throws IOException {
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (new File(entry).getName().startsWith("hadoop-streaming-") && entry.endsWith(".jar")) {
                return entry;
            }
        }
        throw new IOException("hadoop-streaming jar not on the class path (pom.xml)");
    }

    void stop() {
        mr.stop();
    }
}
