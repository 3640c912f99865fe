package io.kgateway.jvm.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kgateway.jvm.Await;
import io.kgateway.jvm.JavaProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kafka Connect distributed worker (ConnectDistributed) as its own
 * process, driven through its REST API.
 *
 * <p>Mechanism. The worker's properties are written to a file once; the REST
 * listener binds an ephemeral port, and each start reads the URL it
 * advertises from the worker's log (RestServer logs it at INFO). The connectors
 * of the tests are on the test classpath, which is the worker's classpath
 * (META-INF/services names them for plugin discovery).
 */
final class ConnectWorker implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path propsFile;
    private static final Pattern LISTENING = Pattern.compile("REST server listening at \\S+, advertising URL (\\S+)");

    private URI rest;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private JavaProcess process;

    /** A worker of group groupId on bootstrap, with extra worker properties. */
    ConnectWorker(Path dir, String bootstrap, String groupId, Map<String, String> extra) throws IOException {
        Map<String, String> p = new TreeMap<>();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", groupId);
        p.put("listeners", "http://127.0.0.1:0");
        p.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        p.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        p.put("config.storage.topic", groupId + "-configs");
        p.put("offset.storage.topic", groupId + "-offsets");
        p.put("status.storage.topic", groupId + "-status");
        p.put("config.storage.replication.factor", "1");
        p.put("offset.storage.replication.factor", "1");
        p.put("status.storage.replication.factor", "1");
        p.put("offset.flush.interval.ms", "500");
        // A killed worker's membership of the workers' group ends sooner
        // than the default 10 s, and tasks of a worker that left are
        // reassigned at once. (Sink consumers' session timeouts are set per
        // connector: consumer.override.*, allowed by the policy All.)
        p.put("session.timeout.ms", "6000");
        p.put("heartbeat.interval.ms", "1000");
        p.put("scheduled.rebalance.max.delay.ms", "0");
        p.put("connector.client.config.override.policy", "All");
        // Plugins are found through their ServiceLoader manifests (ours are
        // in META-INF/services), not by scanning every jar: a faster start.
        p.put("plugin.discovery", "service_load");
        p.putAll(extra);
        StringBuilder sb = new StringBuilder();
        p.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        propsFile = dir.resolve(groupId + "-worker.properties");
        Files.writeString(propsFile, sb.toString());
    }

    /** Starts the worker process and waits until its REST API answers. */
    void start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("worker is running");
        }
        process = JavaProcess.start("connect", "org.apache.kafka.connect.cli.ConnectDistributed",
            List.of("-Xmx384m"), List.of(propsFile.toString()));
        rest = Await.value(Duration.ofSeconds(120), "Connect's REST server listening", () -> {
            assertAlive();
            Matcher m = LISTENING.matcher(process.output());
            return m.find() ? URI.create(m.group(1)) : null;
        });
        Await.until(Duration.ofSeconds(120), "Connect REST API at " + rest, () -> {
            assertAlive();
            return get("/connectors").statusCode() == 200;
        });
    }

    void kill() {
        process.kill();
    }

    void assertAlive() {
        if (!process.isAlive()) {
            throw new Error("Connect worker exited\n" + process.tail());
        }
    }

    String tail() {
        return process == null ? "(no worker)" : process.tail();
    }

    /** Creates (or updates) connector name with config. */
    void putConnector(String name, Map<String, String> config) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(rest.resolve("/connectors/" + name + "/config"))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(config))).build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200 && r.statusCode() != 201) {
            throw new AssertionError("PUT connector " + name + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** Fails if a task of connector name is FAILED, with its trace. */
    void assertTasksNotFailed(String name) throws Exception {
        HttpResponse<String> r = get("/connectors/" + name + "/status");
        if (r.statusCode() != 200) {
            return;
        }
        for (JsonNode t : JSON.readTree(r.body()).path("tasks")) {
            if ("FAILED".equals(t.path("state").asText())) {
                throw new Error("task " + name + "-" + t.path("id").asText() + " failed: " + t.path("trace").asText());
            }
        }
    }

    /** Waits until connector name and its tasks (at least one) are RUNNING. */
    void awaitRunning(String name) {
        Await.until(Duration.ofSeconds(120), "connector " + name + " and its tasks RUNNING", () -> {
            assertAlive();
            HttpResponse<String> r = get("/connectors/" + name + "/status");
            if (r.statusCode() != 200) {
                return false;
            }
            JsonNode s = JSON.readTree(r.body());
            boolean running = "RUNNING".equals(s.path("connector").path("state").asText())
                && s.path("tasks").size() > 0;
            for (JsonNode t : s.path("tasks")) {
                if ("FAILED".equals(t.path("state").asText())) {
                    throw new Error("task failed: " + t.path("trace").asText());
                }
                running &= "RUNNING".equals(t.path("state").asText());
            }
            return running;
        });
    }

    /**
     * The committed source offset of connector name's "next" field (the
     * counting source's position), from GET /connectors/NAME/offsets
     * (KIP-875); -1 before any offset is committed.
     */
    long committedNext(String name) throws Exception {
        HttpResponse<String> r = get("/connectors/" + name + "/offsets");
        if (r.statusCode() != 200) {
            throw new AssertionError("GET offsets of " + name + ": " + r.statusCode() + " " + r.body());
        }
        long next = -1;
        for (JsonNode o : JSON.readTree(r.body()).path("offsets")) {
            next = Math.max(next, o.path("offset").path("next").asLong(-1));
        }
        return next;
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(rest.resolve(path)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        if (process != null) {
            process.close();
        }
    }

}
