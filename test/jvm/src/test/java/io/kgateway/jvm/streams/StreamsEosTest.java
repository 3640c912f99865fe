package io.kgateway.jvm.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgateway.jvm.Await;
import io.kgateway.jvm.Clients;
import io.kgateway.jvm.JavaProcess;
import io.kgateway.jvm.KGateway;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.DescribeStreamsGroupsOptions;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupTopologyDescriptionStatus;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Streams at exactly_once_v2 against kgateway, through kill -9 of an
 * instance, kill -9 of kgateway, and a restart of every instance.
 *
 * <p>The application ({@link EosApp}, two instances as separate JVMs) re-keys
 * orders by customer (repartition topic), aggregates count and sum per
 * customer (state store with a compacted changelog) and joins each update
 * with the customers table. With the record cache off, every input order
 * makes exactly one aggregate update, so for a customer with n orders the
 * output holds, under exactly-once, exactly n records whose counts are
 * 1, 2, ..., n in offset order, the last one carrying the customer's total
 * sum and region. What the test asserts, reading the output at
 * read_committed:
 * <ul>
 *   <li>the number of output records equals the number of orders (none
 *       lost, no update written twice: a replay of input whose output was
 *       committed, or a state store restored to a stale value, would add
 *       records or break the sequence);
 *   <li>per customer, the counts are exactly 1..n in order, each record's
 *       region is the customer's, and the last record's sum is the total
 *       computed from the input ({@link Orders#expected});
 *   <li>the changelog topic Streams created is compacted.
 * </ul>
 * Aborted transactions (of the killed instances) may hold records that a
 * read_uncommitted reader would see; read_committed must not.
 */
@Tag("slow")
@Timeout(value = 8, unit = TimeUnit.MINUTES) // beyond the 240 s default: kills, restarts, waits
class StreamsEosTest {
    /** Orders in all; half are produced before the kills, half after. */
    static final int ORDERS = 4000;
    static final int PARTITIONS = 4;
    /** Sleep per order in the application, so that the kills land mid-stream. */
    static final long THROTTLE_MS = 4;
    static final Duration SLOW = Duration.ofSeconds(180);

    @TempDir
    Path tmp;

    @Test
    void exactlyOnceThroughKillsClassicProtocol() throws Exception {
        run("classic");
    }

    /**
     * The same with the Streams rebalance protocol (KIP-1071): the group is
     * a streams group, kgateway creates the repartition topic and the
     * compacted changelog, assigns the tasks and keeps the group through
     * its own kill -9. The session timeout is the broker's
     * (group.streams.session.timeout.ms), here as short as the classic
     * variant's, so that a killed instance's tasks move as soon.
     */
    @Test
    void exactlyOnceThroughKillsStreamsProtocol() throws Exception {
        assertTrue(servesApi("StreamsGroupHeartbeat"), "kgateway apis lists StreamsGroupHeartbeat");
        run("streams");
    }

    private void run(String groupProtocol) throws Exception {
        // Hung transactions of killed instances are aborted after Streams'
        // transaction.timeout.ms (10 s); kgateway looks for them every second.
        try (KGateway kg = KGateway.start(Map.of(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000",
                "group.streams.session.timeout.ms", "6000",
                "group.streams.heartbeat.interval.ms", "1000"))) {
            String app = Clients.unique("eos");
            String orders = app + "-orders";
            String customers = app + "-customers";
            String output = app + "-output";
            try (Admin admin = kg.admin()) {
                for (String t : List.of(orders, customers, output)) {
                    Clients.createTopic(admin, t, PARTITIONS);
                }
            }
            long base = System.currentTimeMillis() - 3_600_000;
            try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                for (int c = 0; c < Orders.CUSTOMERS; c++) {
                    // Older than every order: the join finds each customer.
                    p.send(new ProducerRecord<>(customers, null, base, Orders.customer(c), Orders.region(c)));
                }
                produceOrders(p, orders, base, 0, ORDERS / 2);
            }

            List<String> appArgs = List.of(
                "bootstrap.servers=" + kg.bootstrap(),
                "application.id=" + app,
                "group.protocol=" + groupProtocol,
                "orders=" + orders, "customers=" + customers, "output=" + output,
                "throttle.ms=" + THROTTLE_MS,
                "session.timeout.ms=6000", "heartbeat.interval.ms=1000");
            Output out = new Output(kg, output);
            JavaProcess a = instance("a", appArgs);
            JavaProcess b = instance("b", appArgs);
            try {
                out.await(ORDERS / 8, a, b);
                a.kill();
                System.out.printf("killed instance a at %d committed output records%n", out.count);
                out.await(ORDERS / 4, b);
                kg.kill();
                System.out.printf("killed kgateway at %d committed output records%n", out.count);
                kg.startAgain();
                // b lives through kgateway's crash and goes on by itself.
                out.await(ORDERS * 3 / 8, b);
                b.kill();
                System.out.printf("killed instance b at %d committed output records%n", out.count);
                a = instance("a", appArgs);
                b = instance("b", appArgs);
                try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                    produceOrders(p, orders, base, ORDERS / 2, ORDERS);
                }
                Map<String, Orders.Total> expected = Orders.expected(ORDERS);
                JavaProcess fa = a;
                JavaProcess fb = b;
                // Under exactly-once no count passes its final value; a
                // replayed update would push it past, and check() then says so.
                Await.until(SLOW, "every customer's count at its final value in " + output, () -> {
                    out.poll();
                    assertAlive(fa, fb);
                    return out.caughtUp() && reached(out.lastCounts(), expected);
                });
                System.out.printf("%d committed output records for %d orders%n", out.count, ORDERS);
                check(out.records(), expected);
                checkChangelog(kg, app);
                if (groupProtocol.equals("streams")) {
                    checkTopologyDescription(kg, app, orders, customers, output);
                }
            } finally {
                a.close();
                b.close();
                out.close();
            }
        }
    }

    /**
     * KIP-1331: the instances pushed their topology description when
     * kgateway asked for it (topology.description.push.enabled defaults to
     * true), and the admin client reads it back, node for node as
     * Topology#describe() has it.
     */
    private static void checkTopologyDescription(KGateway kg, String app, String orders, String customers, String output) {
        Set<String> want = new TreeSet<>();
        for (TopologyDescription.Subtopology s : EosApp.topology(orders, customers, output, THROTTLE_MS).describe().subtopologies()) {
            s.nodes().forEach(n -> want.add(n.name()));
        }
        try (Admin admin = kg.admin()) {
            Await.until(SLOW, "the topology description of " + app, () -> {
                StreamsGroupDescription d = admin.describeStreamsGroups(List.of(app),
                    new DescribeStreamsGroupsOptions().includeTopologyDescription(true)).describedGroups().get(app).get();
                if (d.topologyDescriptionStatus() != StreamsGroupTopologyDescriptionStatus.AVAILABLE) {
                    return false;
                }
                Set<String> got = new TreeSet<>();
                d.topologyDescription().orElseThrow().subtopologies().forEach(s -> s.nodes().forEach(n -> got.add(n.name())));
                assertEquals(want, got, "the nodes of the described topology");
                return true;
            });
        }
    }

    private JavaProcess instance(String name, List<String> appArgs) throws IOException {
        Path stateDir = tmp.resolve("state-" + name);
        Files.createDirectories(stateDir);
        List<String> args = new ArrayList<>(appArgs);
        args.add("state.dir=" + stateDir);
        return JavaProcess.start("streams-" + name, EosApp.class.getName(), List.of("-Xmx256m"), args);
    }

    private static void produceOrders(KafkaProducer<String, String> p, String topic, long base, int from, int to) {
        for (int i = from; i < to; i++) {
            p.send(new ProducerRecord<>(topic, null, base + 1 + i, Orders.orderKey(i), Orders.orderValue(i)));
        }
        p.flush();
    }

    /** Whether every customer's last count is at least its expected final count. */
    private static boolean reached(Map<String, Long> last, Map<String, Orders.Total> expected) {
        return expected.entrySet().stream()
            .allMatch(e -> last.getOrDefault(e.getKey(), 0L) >= e.getValue().count());
    }

    /** The assertions of the class comment, on every committed output record. */
    private static void check(Map<String, List<String>> records, Map<String, Orders.Total> expected) {
        long total = records.values().stream().mapToLong(List::size).sum();
        assertEquals(ORDERS, total, "output records, one per order");
        assertEquals(expected.keySet(), records.keySet(), "customers in the output");
        expected.forEach((customer, want) -> {
            List<String> got = records.get(customer);
            for (int i = 0; i < got.size(); i++) {
                Orders.Total t = Orders.Total.parse(got.get(i));
                assertEquals(i + 1, t.count(), customer + "'s update " + i + " of " + got);
                assertEquals(want.region(), t.region(), customer + "'s region");
            }
            assertEquals(want, Orders.Total.parse(got.get(got.size() - 1)), customer + "'s final aggregate");
        });
    }

    private static void checkChangelog(KGateway kg, String app) {
        try (Admin admin = kg.admin()) {
            String changelog = app + "-totals-changelog";
            Set<String> topics = Clients.get(admin.listTopics().names());
            assertTrue(topics.contains(changelog), changelog + " in " + topics);
            assertTrue(topics.contains(app + "-by-customer-repartition"), "repartition topic in " + topics);
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, changelog);
            Config c = Clients.get(admin.describeConfigs(List.of(r)).all()).get(r);
            assertEquals("compact", c.get("cleanup.policy").value(), changelog + "'s cleanup.policy");
        }
    }

    private static void assertAlive(JavaProcess... ps) {
        for (JavaProcess p : ps) {
            if (!p.isAlive()) {
                throw new Error(p + " exited\n" + p.tail());
            }
        }
    }

    /**
     * Whether kgateway serves an API (by name, as `kgateway apis` lists it).
     */
    static boolean servesApi(String api) throws Exception {
        Process p = new ProcessBuilder(KGateway.binary().toString(), "apis").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "kgateway apis: " + out);
        return out.contains(api);
    }

    /** A read_committed reader of the whole output topic, keeping every record per key. */
    private static final class Output implements AutoCloseable {
        private final KafkaConsumer<String, String> consumer;
        private final List<TopicPartition> tps = new ArrayList<>();
        private final Map<String, List<String>> byKey = new HashMap<>();
        private long count;

        Output(KGateway kg, String topic) {
            consumer = Clients.consumer(kg, Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
            for (int i = 0; i < PARTITIONS; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
        }

        void poll() {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                count++;
            }
        }

        /** Waits until at least n records were read, the instances still running. */
        void await(long n, JavaProcess... instances) {
            Await.until(SLOW, n + " committed output records", () -> {
                poll();
                for (JavaProcess p : instances) {
                    if (!p.isAlive()) {
                        throw new Error(p + " exited\n" + p.tail());
                    }
                }
                return count >= n;
            });
        }

        /** Whether the reader is at the last stable offset of every partition. */
        boolean caughtUp() {
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            for (TopicPartition tp : tps) {
                if (consumer.position(tp) < end.get(tp)) {
                    return false;
                }
            }
            return true;
        }

        Map<String, Long> lastCounts() {
            Map<String, Long> m = new TreeMap<>();
            byKey.forEach((k, v) -> m.put(k, Orders.Total.parse(v.get(v.size() - 1)).count()));
            return m;
        }

        Map<String, List<String>> records() {
            return byKey;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
