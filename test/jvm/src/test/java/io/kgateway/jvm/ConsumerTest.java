package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** KafkaConsumer against kgateway: group protocols, assignors, positions and commits. */
class ConsumerTest {
    private static KGateway kg;

    @BeforeAll
    static void start() {
        // KIP-848 members heartbeat every 500 ms, so its rebalances take
        // well under the default 5 s intervals.
        kg = KGateway.start(Map.of(
            "group.consumer.min.heartbeat.interval.ms", "500",
            "group.consumer.heartbeat.interval.ms", "500"));
    }

    @AfterAll
    static void stop() {
        if (kg != null) {
            kg.close();
        }
    }

    /** Records every callback of a ConsumerRebalanceListener. */
    static final class Recorder implements ConsumerRebalanceListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final Set<TopicPartition> revoked = Collections.synchronizedSet(new HashSet<>());

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            events.add("revoked" + sorted(partitions));
            revoked.addAll(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            events.add("assigned" + sorted(partitions));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            events.add("lost" + sorted(partitions));
        }
    }

    static List<Integer> sorted(Collection<TopicPartition> tps) {
        return tps.stream().map(TopicPartition::partition).sorted().toList();
    }

    static void produce(String topic, int partitions, int from, int n) throws Exception {
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of())) {
            for (int i = from; i < from + n; i++) {
                p.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
            }
            p.flush();
        }
    }

    static KafkaConsumer<String, String> groupConsumer(String group, Map<String, Object> extra) {
        Map<String, Object> m = new HashMap<>(extra);
        m.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        m.putIfAbsent(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return Clients.consumer(kg, m);
    }

    /** Polls every consumer in turn (one thread: each is single-threaded) until done holds. */
    static void pollUntil(String what, List<KafkaConsumer<String, String>> cs,
                          List<ConsumerRecord<String, String>> sink, Await.Condition done) {
        Await.until(what, () -> {
            for (KafkaConsumer<String, String> c : cs) {
                c.poll(Duration.ofMillis(100)).forEach(sink::add);
            }
            return done.holds();
        });
    }

    static boolean splitEvenly(KafkaConsumer<String, String> a, KafkaConsumer<String, String> b, int partitions) {
        Set<TopicPartition> all = new HashSet<>(a.assignment());
        all.addAll(b.assignment());
        return a.assignment().size() == partitions / 2 && b.assignment().size() == partitions / 2
            && all.size() == partitions;
    }

    /**
     * Classic protocol, eager RangeAssignor: when a second member joins,
     * the first gives up its whole assignment (onPartitionsRevoked with all
     * of it) before the partitions are split between the two.
     */
    @Test
    @Tag("core")
    void classicEagerRangeRevokesEverything() {
        String topic = Clients.unique("eager");
        String group = Clients.unique("g-eager");
        Clients.createTopic(kg, topic, 4);
        Map<String, Object> cfg = Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
            ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName());
        Recorder r1 = new Recorder();
        try (KafkaConsumer<String, String> c1 = groupConsumer(group, cfg);
             KafkaConsumer<String, String> c2 = groupConsumer(group, cfg)) {
            c1.subscribe(List.of(topic), r1);
            List<ConsumerRecord<String, String>> sink = new ArrayList<>();
            pollUntil("c1 owns all 4", List.of(c1), sink, () -> c1.assignment().size() == 4);
            r1.events.clear();
            c2.subscribe(List.of(topic));
            pollUntil("2 + 2", List.of(c1, c2), sink, () -> splitEvenly(c1, c2, 4));
            assertEquals("revoked[0, 1, 2, 3]", r1.events.get(0), "eager: everything revoked first: " + r1.events);
            assertEquals("assigned" + sorted(c1.assignment()), r1.events.get(1), r1.events.toString());
        }
    }

    /**
     * Classic protocol, cooperative-sticky (KIP-429): the first member
     * revokes only the partitions that move to the newcomer and keeps the
     * others throughout.
     */
    @Test
    @Tag("core")
    void classicCooperativeStickyRevokesOnlyMovedPartitions() {
        String topic = Clients.unique("coop");
        String group = Clients.unique("g-coop");
        Clients.createTopic(kg, topic, 4);
        Map<String, Object> cfg = Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
            ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        Recorder r1 = new Recorder();
        try (KafkaConsumer<String, String> c1 = groupConsumer(group, cfg);
             KafkaConsumer<String, String> c2 = groupConsumer(group, cfg)) {
            c1.subscribe(List.of(topic), r1);
            List<ConsumerRecord<String, String>> sink = new ArrayList<>();
            pollUntil("c1 owns all 4", List.of(c1), sink, () -> c1.assignment().size() == 4);
            r1.revoked.clear();
            r1.events.clear();
            c2.subscribe(List.of(topic));
            pollUntil("2 + 2", List.of(c1, c2), sink, () -> splitEvenly(c1, c2, 4));
            assertEquals(c2.assignment(), r1.revoked, "only what moved was revoked: " + r1.events);
            for (String e : r1.events) {
                assertTrue(!e.startsWith("lost"), "no partition lost: " + r1.events);
            }
        }
    }

    /**
     * group.protocol=consumer (KIP-848): the server assigns; two members
     * split the partitions, each record is read once, and the Admin
     * describes a CONSUMER group with both members.
     */
    @Test
    @Tag("core")
    void consumerProtocolServerSideAssignment() throws Exception {
        String topic = Clients.unique("kip848");
        String group = Clients.unique("g-848");
        Clients.createTopic(kg, topic, 4);
        Map<String, Object> cfg = Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        try (KafkaConsumer<String, String> c1 = groupConsumer(group, cfg);
             KafkaConsumer<String, String> c2 = groupConsumer(group, cfg)) {
            c1.subscribe(List.of(topic));
            c2.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> sink = new ArrayList<>();
            pollUntil("2 + 2", List.of(c1, c2), sink, () -> splitEvenly(c1, c2, 4));
            produce(topic, 4, 0, 400);
            pollUntil("400 read", List.of(c1, c2), sink, () -> sink.size() >= 400);
            Set<String> values = new HashSet<>();
            sink.forEach(r -> values.add(r.value()));
            assertEquals(400, sink.size(), "each record read once");
            assertEquals(400, values.size());
            c1.commitSync();
            c2.commitSync();
            try (Admin admin = kg.admin()) {
                ConsumerGroupDescription d = Clients.get(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group));
                assertEquals(GroupType.CONSUMER, d.type());
                assertEquals(2, d.members().size());
                Map<TopicPartition, OffsetAndMetadata> committed =
                    Clients.get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
                for (int p = 0; p < 4; p++) {
                    assertEquals(100, committed.get(new TopicPartition(topic, p)).offset());
                }
            }
        }
    }

    /** seek, seekToBeginning, seekToEnd and position. */
    @Test
    @Tag("core")
    void seekMovesThePosition() throws Exception {
        String topic = Clients.unique("seek");
        Clients.createTopic(kg, topic, 1);
        produce(topic, 1, 0, 100);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = Clients.consumer(kg, Map.of())) {
            c.assign(List.of(tp));
            c.seek(tp, 42);
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            pollUntil("from 42", List.of(c), got, () -> !got.isEmpty());
            assertEquals(42, got.get(0).offset());
            assertEquals("v42", got.get(0).value());
            c.seekToEnd(List.of(tp));
            assertEquals(100, c.position(tp));
            c.seekToBeginning(List.of(tp));
            assertEquals(0, c.position(tp));
            c.seek(tp, new OffsetAndMetadata(99));
            got.clear();
            pollUntil("from 99", List.of(c), got, () -> !got.isEmpty());
            assertEquals(List.of("v99"), got.stream().map(ConsumerRecord::value).toList());
            assertEquals(100, c.position(tp));
        }
    }

    /**
     * offsetsForTimes: the earliest offset whose timestamp is at least the
     * one asked for, with that record's timestamp; null past the last.
     */
    @Test
    @Tag("core")
    void offsetsForTimesFindsFirstAtOrAfter() throws Exception {
        String topic = Clients.unique("times");
        Clients.createTopic(kg, topic, 1);
        long base = 1_700_000_000_000L;
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of())) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(topic, 0, base + i * 1000L, "k", "v" + i)).get();
            }
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = Clients.consumer(kg, Map.of())) {
            OffsetAndTimestamp at = c.offsetsForTimes(Map.of(tp, base + 2500)).get(tp);
            assertNotNull(at);
            assertEquals(3, at.offset());
            assertEquals(base + 3000, at.timestamp());
            assertEquals(0, c.offsetsForTimes(Map.of(tp, 0L)).get(tp).offset());
            assertEquals(9, c.offsetsForTimes(Map.of(tp, base + 9000)).get(tp).offset());
            assertNull(c.offsetsForTimes(Map.of(tp, base + 9001)).get(tp));
        }
    }

    /**
     * commitAsync pipelined: a commit per record with many in flight; the
     * callbacks run in commit order, none fails, and the committed offset
     * is the last one.
     */
    @Test
    @Tag("core")
    void commitAsyncPipelinedCallbacksInOrder() throws Exception {
        String topic = Clients.unique("async");
        String group = Clients.unique("g-async");
        Clients.createTopic(kg, topic, 1);
        int n = 1000;
        produce(topic, 1, 0, n);
        TopicPartition tp = new TopicPartition(topic, 0);
        List<Long> order = new ArrayList<>();
        List<Exception> errors = new ArrayList<>();
        try (KafkaConsumer<String, String> c = groupConsumer(group, Map.of())) {
            c.assign(List.of(tp));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            Await.until("read all", () -> {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    got.add(r);
                    long next = r.offset() + 1;
                    c.commitAsync(Map.of(tp, new OffsetAndMetadata(next)), (offsets, e) -> {
                        if (e != null) {
                            errors.add(e);
                        }
                        order.add(offsets.get(tp).offset());
                    });
                }
                return got.size() >= n;
            });
            c.commitSync(Map.of(tp, new OffsetAndMetadata(n))); // completes the async ones first
            assertEquals(List.of(), errors);
            assertEquals(n, order.size(), "every callback ran");
            for (int i = 0; i < n; i++) {
                assertEquals(i + 1, order.get(i), "callback " + i + " in commit order");
            }
            assertEquals(n, c.committed(Set.of(tp)).get(tp).offset());
        }
    }

    /**
     * Static membership (KIP-345): a member with group.instance.id that
     * restarts within session.timeout.ms gets its previous partitions back
     * and the other member sees no rebalance (no callback, same generation).
     */
    @Test
    @Tag("core")
    void staticMemberRestartKeepsAssignmentWithoutRebalance() {
        String topic = Clients.unique("static");
        String group = Clients.unique("g-static");
        Clients.createTopic(kg, topic, 4);
        Map<String, Object> base = Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
            ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000,
            ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName());
        Map<String, Object> cfgA = new HashMap<>(base);
        cfgA.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "a");
        Map<String, Object> cfgB = new HashMap<>(base);
        cfgB.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "b");
        Recorder rb = new Recorder();
        List<ConsumerRecord<String, String>> sink = new ArrayList<>();
        try (KafkaConsumer<String, String> b = groupConsumer(group, cfgB)) {
            Set<TopicPartition> before;
            int generation;
            try (KafkaConsumer<String, String> a = groupConsumer(group, cfgA)) {
                a.subscribe(List.of(topic));
                b.subscribe(List.of(topic), rb);
                pollUntil("2 + 2", List.of(a, b), sink, () -> splitEvenly(a, b, 4));
                before = new HashSet<>(a.assignment());
                generation = b.groupMetadata().generationId();
                rb.events.clear();
            } // a static member's close sends no LeaveGroup: it stays in the group
            try (KafkaConsumer<String, String> a2 = groupConsumer(group, cfgA)) {
                a2.subscribe(List.of(topic));
                pollUntil("a back", List.of(a2, b), sink, () -> a2.assignment().size() == 2);
                assertEquals(before, a2.assignment(), "the restarted member has its partitions back");
                for (int i = 0; i < 5; i++) {
                    b.poll(Duration.ofMillis(100));
                }
                assertEquals(List.of(), rb.events, "the other member saw no rebalance");
                assertEquals(generation, b.groupMetadata().generationId());
                assertEquals(generation, a2.groupMetadata().generationId());
            }
        }
    }

    /**
     * A rebalance while consuming (a second member joins, producing goes
     * on): with commitSync after processing and in onPartitionsRevoked,
     * every record is read at least once and the final commits reach the
     * end of every partition.
     */
    @Test
    @Tag("core")
    void rebalanceWhileConsumingLosesNothing() throws Exception {
        String topic = Clients.unique("rebal");
        String group = Clients.unique("g-rebal");
        int parts = 4;
        Clients.createTopic(kg, topic, parts);
        produce(topic, parts, 0, 1000);
        Set<String> seen = Collections.synchronizedSet(new HashSet<>());
        Map<String, Object> cfg = Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50);
        try (KafkaConsumer<String, String> c1 = groupConsumer(group, cfg);
             KafkaConsumer<String, String> c2 = groupConsumer(group, cfg)) {
            c1.subscribe(List.of(topic), committingListener(c1));
            c2.subscribe(List.of(topic), committingListener(c2)); // subscribed, joins at its first poll
            Await.until("c1 read 300", () -> {
                consumeAndCommit(c1, seen);
                return seen.size() >= 300;
            });
            produce(topic, parts, 1000, 1000);
            Await.until("all 2000 read", () -> {
                consumeAndCommit(c1, seen);
                consumeAndCommit(c2, seen);
                return seen.size() == 2000;
            });
            Await.until("both members own partitions", () -> {
                consumeAndCommit(c1, seen);
                consumeAndCommit(c2, seen);
                return !c1.assignment().isEmpty() && !c2.assignment().isEmpty();
            });
            for (int i = 0; i < 2000; i++) {
                assertTrue(seen.contains("v" + i), "v" + i + " read");
            }
        }
        try (Admin admin = kg.admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                Clients.get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            for (int p = 0; p < parts; p++) {
                assertEquals(500, committed.get(new TopicPartition(topic, p)).offset(), "partition " + p);
            }
        }
    }

    /**
     * The same at-least-once rule under group.protocol=consumer (KIP-848):
     * a second member joins while the first consumes; nothing is lost and
     * the final commits reach the end of every partition.
     */
    @Test
    void consumerProtocolRebalanceWhileConsumingLosesNothing() throws Exception {
        String topic = Clients.unique("rebal848");
        String group = Clients.unique("g-rebal848");
        int parts = 4;
        Clients.createTopic(kg, topic, parts);
        produce(topic, parts, 0, 1000);
        Set<String> seen = Collections.synchronizedSet(new HashSet<>());
        Map<String, Object> cfg = Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50,
            ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        try (KafkaConsumer<String, String> c1 = groupConsumer(group, cfg);
             KafkaConsumer<String, String> c2 = groupConsumer(group, cfg)) {
            c1.subscribe(List.of(topic), committingListener(c1));
            Await.until("c1 read 300", () -> {
                consumeAndCommit(c1, seen);
                return seen.size() >= 300;
            });
            c2.subscribe(List.of(topic), committingListener(c2));
            produce(topic, parts, 1000, 1000);
            Await.until("all 2000 read, both members own partitions", () -> {
                consumeAndCommit(c1, seen);
                consumeAndCommit(c2, seen);
                return seen.size() == 2000 && !c1.assignment().isEmpty() && !c2.assignment().isEmpty();
            });
        }
        try (Admin admin = kg.admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                Clients.get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            for (int p = 0; p < parts; p++) {
                assertEquals(500, committed.get(new TopicPartition(topic, p)).offset(), "partition " + p);
            }
        }
    }

    private static ConsumerRebalanceListener committingListener(KafkaConsumer<String, String> c) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                c.commitSync();
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
        };
    }

    private static void consumeAndCommit(KafkaConsumer<String, String> c, Set<String> seen) {
        var records = c.poll(Duration.ofMillis(100));
        records.forEach(r -> seen.add(r.value()));
        if (!records.isEmpty()) {
            c.commitSync();
        }
    }
}
