package io.kgateway.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;

/**
 * A real kgateway process for the JVM tests: cmd/kgateway built once per
 * JVM, started on 127.0.0.1 with ephemeral ports over a temporary data
 * directory, with any extra configuration properties.
 *
 * <p>Mechanism. Every setting (listen or listeners, data.dir, metrics.addr
 * and the extras) goes into a server.properties file passed with --config;
 * KGATEWAY_* variables of the test's environment are removed so that only
 * that file configures the process. The process logs JSON to a file under
 * target/kgateway-logs; start waits for its "ready" line, which names the
 * bound addresses, and then for /readyz to answer 200. After the first start
 * the file is rewritten with the bound ports, so a restart (after {@link
 * #stop()}, {@link #kill()} or neither) serves the same data directory on
 * the same addresses, as clients that already know them expect.
 *
 * <p>Invariants. At most one process runs per instance; close() ends it
 * (SIGTERM, then SIGKILL after the deadline) and removes the data directory.
 */
public final class KGateway implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final Object BUILD_LOCK = new Object();
    private static Path binary;

    private final String name;
    private final Path workDir;
    private final Path dataDir;
    private final Path configFile;
    private final Map<String, String> props;
    private Process process;
    private int starts;
    private Path logFile;
    private String addr;
    private final Map<String, String> listenerAddrs = new LinkedHashMap<>();
    private String metricsAddr;

    private KGateway(Map<String, String> extra) throws IOException {
        this.name = "kg" + INSTANCES.incrementAndGet();
        this.workDir = Files.createTempDirectory("kgateway-jvm-");
        this.dataDir = workDir.resolve("data");
        this.configFile = workDir.resolve("server.properties");
        this.props = new LinkedHashMap<>();
        props.put("data.dir", dataDir.toString());
        props.put("metrics.addr", "127.0.0.1:0");
        props.put("log.format", "json");
        props.putAll(extra);
        if (!props.containsKey("listeners")) {
            props.putIfAbsent("listen", "127.0.0.1:0");
        }
    }

    /** Starts a kgateway with its defaults. */
    public static KGateway start() {
        return start(Map.of());
    }

    /**
     * Starts a kgateway with extra configuration properties (README's
     * table: e.g. "num.partitions", "message.max.bytes", or "listeners" with
     * NAME://127.0.0.1:0 entries, which then replaces listen).
     */
    public static KGateway start(Map<String, String> extra) {
        KGateway kg;
        try {
            kg = new KGateway(extra);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            kg.startProcess();
        } catch (RuntimeException | Error e) {
            kg.close();
            throw e;
        }
        return kg;
    }

    /** The address of the main listener (listen, or the first of listeners). */
    public String bootstrap() {
        return addr;
    }

    /** The bound address of the listener named name (e.g. "SASL_SSL"). */
    public String bootstrap(String listener) {
        String a = listenerAddrs.get(listener);
        if (a == null) {
            throw new IllegalArgumentException("no listener " + listener + " in " + listenerAddrs);
        }
        return a;
    }

    /** host:port of /metrics, /healthz and /readyz. */
    public String metricsAddr() {
        return metricsAddr;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** The log file of the current (or last) process. */
    public Path logFile() {
        return logFile;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Client properties with bootstrap.servers set to the main listener. */
    public Properties clientProps() {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, addr);
        return p;
    }

    /** An Admin client of the main listener; the caller closes it. */
    public Admin admin() {
        return Admin.create(clientProps());
    }

    /**
     * Sets a property for the next start (restart): e.g. to change a limit
     * between two runs on the same data.
     */
    public KGateway set(String key, String value) {
        props.put(key, value);
        return this;
    }

    /** SIGTERM and wait for a clean exit (status 0); returns the status. */
    public int stop() {
        if (!isRunning()) {
            return process == null ? 0 : process.exitValue();
        }
        process.destroy(); // SIGTERM on Unix
        int code = waitExit(Await.DEADLINE);
        if (code != 0) {
            throw new AssertionError(name + " exited " + code + " after SIGTERM\n" + logTail());
        }
        return code;
    }

    /** kill -9: the process ends with no chance to flush or close anything. */
    public void kill() {
        if (!isRunning()) {
            return;
        }
        process.destroyForcibly(); // SIGKILL on Unix
        waitExit(Await.DEADLINE);
    }

    /** Stops the process if it runs (SIGTERM) and starts it again on the same data and ports. */
    public void restart() {
        stop();
        startProcess();
    }

    /** Starts the process again after stop() or kill(). */
    public void startAgain() {
        if (isRunning()) {
            throw new IllegalStateException(name + " is running");
        }
        startProcess();
    }

    @Override
    public void close() {
        try {
            if (isRunning()) {
                process.destroy();
                if (!process.waitFor(Await.DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(Await.DEADLINE.toSeconds(), TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        } finally {
            deleteTree(workDir);
        }
    }

    /** The last lines of the current log, for failure messages. */
    public String logTail() {
        if (logFile == null || !Files.exists(logFile)) {
            return "(no log)";
        }
        try {
            List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    private int waitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(name + " did not exit within " + timeout + "\n" + logTail());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private void startProcess() {
        Path bin = binary();
        starts++;
        try {
            writeConfig();
            Path logs = moduleDir().resolve("target/kgateway-logs");
            Files.createDirectories(logs);
            logFile = logs.resolve(name + "-" + ProcessHandle.current().pid() + "-start" + starts + ".log");
            ProcessBuilder pb = new ProcessBuilder(bin.toString(), "--config", configFile.toString());
            pb.environment().keySet().removeIf(k -> k.startsWith("KGATEWAY_"));
            pb.redirectErrorStream(true);
            pb.redirectOutput(ProcessBuilder.Redirect.to(logFile.toFile()));
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        JsonNode ready = Await.value(Await.DEADLINE, name + " logs ready", () -> {
            JsonNode line = readyLine();
            if (line == null && !process.isAlive()) {
                throw new Error(name + " exited " + process.exitValue() + " before ready\n" + logTail());
            }
            return line;
        });
        addr = ready.path("addr").asText();
        listenerAddrs.clear();
        ready.path("listeners").fields().forEachRemaining(e -> listenerAddrs.put(e.getKey(), e.getValue().asText()));
        if (listenerAddrs.isEmpty()) {
            listenerAddrs.put("PLAINTEXT", addr);
        }
        metricsAddr = ready.path("metrics-addr").asText(null);
        pinAddresses();
        if (metricsAddr != null) {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            URI uri = URI.create("http://" + metricsAddr + "/readyz");
            Await.until(name + " /readyz answers 200", () ->
                http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
        }
    }

    /** The "ready" log line of the current process, or null before it. */
    private JsonNode readyLine() throws IOException {
        if (!Files.exists(logFile)) {
            return null;
        }
        for (String line : Files.readAllLines(logFile, StandardCharsets.UTF_8)) {
            if (!line.startsWith("{")) {
                continue;
            }
            JsonNode n;
            try {
                n = JSON.readTree(line);
            } catch (IOException e) {
                continue; // a line being written
            }
            if ("ready".equals(n.path("msg").asText())) {
                return n;
            }
        }
        return null;
    }

    /** Rewrites the listen addresses with the bound ports, for restarts. */
    private void pinAddresses() {
        if (props.containsKey("listeners")) {
            List<String> pinned = new ArrayList<>();
            for (String l : props.get("listeners").split(",")) {
                String lname = l.substring(0, l.indexOf("://")).trim();
                pinned.add(lname + "://" + listenerAddrs.getOrDefault(lname, l.substring(l.indexOf("://") + 3)));
            }
            props.put("listeners", String.join(",", pinned));
        } else {
            props.put("listen", addr);
        }
        if (metricsAddr != null) {
            props.put("metrics.addr", metricsAddr);
        }
    }

    private void writeConfig() throws IOException {
        StringBuilder sb = new StringBuilder("# written by io.kgateway.jvm.KGateway\n");
        props.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        Files.writeString(configFile, sb.toString());
    }

    /** The repository root: the nearest ancestor of the working directory with kgateway's go.mod. */
    public static Path repoRoot() {
        for (Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath(); p != null; p = p.getParent()) {
            Path mod = p.resolve("go.mod");
            try {
                if (Files.exists(mod) && Files.readString(mod).contains("module github.com/kgateway/kgateway\n")) {
                    return p;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        throw new IllegalStateException("no kgateway go.mod above " + System.getProperty("user.dir"));
    }

    private static Path moduleDir() {
        return repoRoot().resolve("test/jvm");
    }

    /**
     * Builds cmd/kgateway into test/jvm/target/kgateway once per JVM (the
     * system property kgateway.bin names a prebuilt binary instead). The
     * build goes to a temporary name renamed into place, so JVMs building
     * at once never run a half-written binary.
     */
    public static Path binary() {
        synchronized (BUILD_LOCK) {
            if (binary != null) {
                return binary;
            }
            String given = System.getProperty("kgateway.bin");
            if (given != null && !given.isEmpty()) {
                binary = Path.of(given);
                return binary;
            }
            Path root = repoRoot();
            Path target = moduleDir().resolve("target");
            Path out = target.resolve("kgateway");
            Path tmp = target.resolve("kgateway.build-" + ProcessHandle.current().pid());
            try {
                Files.createDirectories(target);
                Path buildLog = target.resolve("kgateway-build.log");
                Process p = new ProcessBuilder(System.getProperty("go", "go"), "build", "-o", tmp.toString(), "./cmd/kgateway")
                    .directory(root.toFile()).redirectErrorStream(true).redirectOutput(buildLog.toFile()).start();
                if (!p.waitFor(10, TimeUnit.MINUTES)) {
                    p.destroyForcibly();
                    throw new AssertionError("go build ./cmd/kgateway took over 10 minutes");
                }
                if (p.exitValue() != 0) {
                    throw new AssertionError("go build ./cmd/kgateway failed:\n" + Files.readString(buildLog));
                }
                Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            binary = out;
            return binary;
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a temporary directory
        }
    }

    @Override
    public String toString() {
        return name + "@" + addr;
    }
}
