package io.kgateway.jvm.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgateway.jvm.Await;
import io.kgateway.jvm.Clients;
import io.kgateway.jvm.KGateway;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Connect (a distributed worker, its config, offset and status topics
 * on kgateway) with our own source and sink connectors, through kill -9 of
 * the worker and of kgateway.
 *
 * <p>The source ({@link CountingSourceConnector}) writes 0..N-1 and keeps its
 * position as source offsets; the sink ({@link FileSinkConnector}) appends
 * what it reads to a file. Sink consumers run in a classic group and in a
 * consumer-protocol (KIP-848) group.
 */
@Tag("slow")
@Timeout(value = 8, unit = TimeUnit.MINUTES) // beyond the 240 s default: kills, restarts, waits
class ConnectTest {
    static final int N = 20_000;
    static final int PARTITIONS = 3;
    static final Duration SLOW = Duration.ofSeconds(180);

    @TempDir
    Path tmp;

    /**
     * At least once: after the kills, the source resumes from its committed
     * source offset (every start after the first is at or past the offset
     * the REST API showed committed before the kill, and 0 is in the topic
     * once), and the sink's file holds every number
     * 0..N-1 (duplicates allowed, no gap).
     */
    @Test
    void sourceResumesFromOffsetsAndSinkLosesNothing() throws Exception {
        // Consumer-protocol members (KIP-848) of a killed worker expire
        // after 6 s rather than 45 s.
        try (KGateway kg = KGateway.start(Map.of(
                "group.consumer.min.session.timeout.ms", "6000",
                "group.consumer.session.timeout.ms", "6000",
                "group.consumer.min.heartbeat.interval.ms", "1000",
                "group.consumer.heartbeat.interval.ms", "1000"))) {
            String group = Clients.unique("connect");
            String topic = group + "-numbers";
            Clients.createTopic(kg, topic, PARTITIONS);
            Path starts = tmp.resolve("starts");
            // Two sinks of the same topic: one in a classic consumer group,
            // one in a consumer-protocol group (KIP-848).
            Map<String, Map<String, String>> sinks = Map.of(
                "file-classic", Map.of(
                    "consumer.override.session.timeout.ms", "6000",
                    "consumer.override.heartbeat.interval.ms", "1000"),
                "file-consumer", Map.of("consumer.override.group.protocol", "consumer"));
            try (ConnectWorker w = new ConnectWorker(tmp, kg.bootstrap(), group, Map.of())) {
                w.start();
                w.putConnector("counter", source(topic, starts));
                for (var sink : sinks.entrySet()) {
                    Map<String, String> config = new HashMap<>(sink.getValue());
                    config.put("connector.class", FileSinkConnector.class.getName());
                    config.put("tasks.max", "2");
                    config.put("topics", topic);
                    config.put("file", tmp.resolve(sink.getKey()).toString());
                    w.putConnector(sink.getKey(), config);
                }
                w.awaitRunning("counter");
                for (String sink : sinks.keySet()) {
                    w.awaitRunning(sink);
                }
                long committed = Await.value(SLOW, "a third of the numbers in the sinks' files and committed", () -> {
                    w.assertAlive();
                    long next = w.committedNext("counter");
                    for (String sink : sinks.keySet()) {
                        if (lines(tmp.resolve(sink)).size() < N / 3) {
                            return null;
                        }
                    }
                    return next >= N / 3 ? next : null;
                });
                w.kill();
                kg.kill();
                kg.startAgain();
                w.start();
                for (String sink : sinks.keySet()) {
                    Path sinkFile = tmp.resolve(sink);
                    Await.until(SLOW, "every number in " + sinkFile, () -> {
                        w.assertAlive();
                        return lines(sinkFile).stream().distinct().count() == N;
                    });
                    List<String> got = lines(sinkFile);
                    for (String l : got) {
                        long v = Long.parseLong(l);
                        assertTrue(v >= 0 && v < N, sink + " line " + l);
                    }
                    System.out.printf("at least once: %s has %d lines for %d numbers%n", sink, got.size(), N);
                }
                List<Long> startedAt = lines(starts).stream().map(Long::parseLong).toList();
                assertEquals(0L, startedAt.get(0), "first start of the source task");
                assertTrue(startedAt.size() >= 2, "the source task started again: " + startedAt);
                for (long s : startedAt.subList(1, startedAt.size())) {
                    assertTrue(s >= committed && s <= N,
                        "a restarted source task resumes from its committed offset " + committed + ": " + startedAt);
                }
                Map<String, Integer> inTopic = occurrences(readUntilAll(kg, topic, "read_uncommitted", w));
                assertEquals(1, inTopic.get("0"), "0 is written once: the source never restarted from 0");
                System.out.printf("at least once: offset %d committed before the kill, source starts %s%n",
                    committed, startedAt);
                checkInternalTopics(kg, group);
            }
        }
    }

    /**
     * Exactly-once source (KIP-618): the worker writes each poll's records
     * and their source offset in one transaction. The worker lives through
     * kgateway's kill -9 (its open transaction then either commits or is
     * aborted, and the task goes on), then is killed itself and restarted;
     * a read_committed reader must see every number 0..N-1 exactly once.
     */
    @Test
    void exactlyOnceSource() throws Exception {
        try (KGateway kg = KGateway.start(Map.of(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000"))) {
            String group = Clients.unique("connect-eos");
            String topic = group + "-numbers";
            Clients.createTopic(kg, topic, PARTITIONS);
            Path starts = tmp.resolve("starts");
            try (ConnectWorker w = new ConnectWorker(tmp, kg.bootstrap(), group,
                    Map.of("exactly.once.source.support", "enabled"))) {
                w.start();
                Map<String, String> config = new HashMap<>(source(topic, starts));
                config.put("exactly.once.support", "required");
                config.put("transaction.boundary", "poll");
                w.putConnector("counter", config);
                w.awaitRunning("counter");
                long committed = Await.value(SLOW, "a third of the numbers committed", () -> {
                    w.assertAlive();
                    long next = w.committedNext("counter");
                    return next >= N / 3 ? next : null;
                });
                // The worker lives through kgateway's kill -9 and must go on
                // committing by itself; then it is killed too.
                kg.kill();
                kg.startAgain();
                long later = Await.value(SLOW, "more numbers committed after kgateway's restart", () -> {
                    w.assertAlive();
                    w.assertTasksNotFailed("counter");
                    long next = w.committedNext("counter");
                    return next >= 2 * N / 3 ? next : null;
                });
                w.kill();
                w.start();
                Map<String, Integer> seen = occurrences(readUntilAll(kg, topic, "read_committed", w));
                assertEquals(N, seen.size(), "distinct numbers committed");
                seen.forEach((v, n) -> assertEquals(1, n, v + " committed once"));
                List<Long> startedAt = lines(starts).stream().map(Long::parseLong).toList();
                assertTrue(startedAt.size() >= 2
                        && startedAt.subList(1, startedAt.size()).stream().allMatch(s -> s >= later),
                    "restarted source tasks resume from their committed offset " + later + ": " + startedAt);
                System.out.printf("exactly once: %d numbers, each once; offset %d committed before kgateway's kill,"
                    + " %d before the worker's, source starts %s%n", N, committed, later, startedAt);
                checkInternalTopics(kg, group);
            }
        }
    }

    private static Map<String, String> source(String topic, Path starts) {
        return Map.of(
            "connector.class", CountingSourceConnector.class.getName(),
            "tasks.max", "1",
            "topic", topic,
            "count", Integer.toString(N),
            "batch", "100",
            "poll.sleep.ms", "20",
            "starts.file", starts.toString());
    }

    private static List<String> lines(Path f) throws Exception {
        if (!Files.exists(f)) {
            return List.of();
        }
        List<String> l = new ArrayList<>(Files.readAllLines(f));
        // A line being written has no newline yet: readAllLines returns it,
        // so drop a last line the file does not end with a newline after.
        String s = Files.readString(f);
        if (!s.isEmpty() && !s.endsWith("\n")) {
            l.remove(l.size() - 1);
        }
        return l;
    }

    private static Map<String, Integer> occurrences(List<String> values) {
        Map<String, Integer> m = new HashMap<>();
        values.forEach(v -> m.merge(v, 1, Integer::sum));
        return m;
    }

    private static List<TopicPartition> partitions(String topic) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        return tps;
    }

    /**
     * The values of topic read at isolation from the beginning until every
     * number 0..N-1 was read and the reader is at the end offsets (the last
     * stable offset at read_committed), with the worker running throughout.
     */
    private static List<String> readUntilAll(KGateway kg, String topic, String isolation, ConnectWorker w) {
        List<String> out = new ArrayList<>();
        Set<String> distinct = new HashSet<>();
        try (KafkaConsumer<String, String> c = Clients.consumer(kg,
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            List<TopicPartition> tps = partitions(topic);
            c.assign(tps);
            c.seekToBeginning(tps);
            Await.until(SLOW, "every number in " + topic + " at " + isolation, () -> {
                w.assertAlive();
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out.add(r.value());
                    distinct.add(r.value());
                }
                if (distinct.size() < N) {
                    return false;
                }
                Map<TopicPartition, Long> end = c.endOffsets(tps);
                return tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp));
            });
        }
        return out;
    }

    /** Connect created its config, offset and status topics compacted. */
    private static void checkInternalTopics(KGateway kg, String group) {
        try (Admin admin = kg.admin()) {
            for (String suffix : List.of("-configs", "-offsets", "-status")) {
                ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, group + suffix);
                Config c = Clients.get(admin.describeConfigs(List.of(r)).all()).get(r);
                assertEquals("compact", c.get("cleanup.policy").value(), group + suffix + "'s cleanup.policy");
            }
        }
    }
}
