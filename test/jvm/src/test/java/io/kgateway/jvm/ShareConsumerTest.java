package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** KafkaShareConsumer (KIP-932, share groups) against kgateway. */
class ShareConsumerTest {
    private static KGateway kg;

    @BeforeAll
    static void start() {
        kg = KGateway.start(Map.of("group.share.heartbeat.interval.ms", "500"));
    }

    @AfterAll
    static void stop() {
        if (kg != null) {
            kg.close();
        }
    }

    /** A share group whose members start from the earliest offset (share.auto.offset.reset). */
    static String shareGroup() {
        String group = Clients.unique("share");
        try (Admin admin = kg.admin()) {
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            Clients.get(admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all());
        }
        return group;
    }

    static KafkaShareConsumer<String, String> shareConsumer(String group, String ackMode) {
        Properties p = kg.clientProps();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put("share.acknowledgement.mode", ackMode);
        return new KafkaShareConsumer<>(p);
    }

    static String topicWith(int n, String prefix) throws Exception {
        String topic = Clients.unique("sharetopic");
        Clients.createTopic(kg, topic, 1);
        produce(topic, prefix, 0, n);
        return topic;
    }

    static void produce(String topic, String prefix, int from, int n) throws Exception {
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of())) {
            for (int i = from; i < from + n; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, prefix + i));
            }
            p.flush();
        }
    }

    static int deliveryCount(ConsumerRecord<String, String> r) {
        return r.deliveryCount().orElseThrow(() -> new AssertionError("no delivery count on " + r));
    }

    /**
     * Implicit acknowledgement: the next poll (and commitSync) accepts what
     * the previous poll returned, so a later member of the group gets none
     * of it again, only what is produced after.
     */
    @Test
    @Tag("core")
    void implicitAcknowledgementAcceptsDelivered() throws Exception {
        String topic = topicWith(50, "r");
        String group = shareGroup();
        Set<String> got = new HashSet<>();
        try (KafkaShareConsumer<String, String> c = shareConsumer(group, "implicit")) {
            c.subscribe(List.of(topic));
            Await.until("50 delivered", () -> {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    assertEquals(1, deliveryCount(r), "first delivery of " + r.value());
                    assertTrue(got.add(r.value()), "delivered once: " + r.value());
                }
                return got.size() == 50;
            });
            c.commitSync(); // acknowledges the last poll's records
        }
        produce(topic, "after", 0, 1);
        try (KafkaShareConsumer<String, String> c = shareConsumer(group, "implicit")) {
            c.subscribe(List.of(topic));
            List<String> later = new ArrayList<>();
            Await.until("the new record", () -> {
                c.poll(Duration.ofMillis(200)).forEach(r -> later.add(r.value()));
                return later.contains("after0");
            });
            assertEquals(List.of("after0"), later, "accepted records are not delivered again");
        }
    }

    /**
     * Explicit acknowledgement: ACCEPT and REJECT are final (never delivered
     * again), RELEASE makes a record available again and it comes back
     * with delivery count 2.
     */
    @Test
    @Tag("core")
    void explicitAcceptReleaseReject() throws Exception {
        int n = 30;
        String topic = topicWith(n, "r");
        String group = shareGroup();
        Set<String> released = new HashSet<>();
        Set<String> finalized = new HashSet<>();
        Map<String, Integer> redelivered = new HashMap<>();
        try (KafkaShareConsumer<String, String> c = shareConsumer(group, "explicit")) {
            c.subscribe(List.of(topic));
            Await.until("first deliveries", () -> {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    int i = Integer.parseInt(r.value().substring(1));
                    if (deliveryCount(r) > 1) {
                        redelivered.put(r.value(), deliveryCount(r));
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        continue;
                    }
                    AcknowledgeType t = switch (i % 3) {
                        case 0 -> AcknowledgeType.ACCEPT;
                        case 1 -> AcknowledgeType.RELEASE;
                        default -> AcknowledgeType.REJECT;
                    };
                    c.acknowledge(r, t);
                    (t == AcknowledgeType.RELEASE ? released : finalized).add(r.value());
                }
                c.commitSync().forEach((tp, err) -> err.ifPresent(e -> {
                    throw new AssertionError("acknowledgement of " + tp + " failed", e);
                }));
                return released.size() + finalized.size() == n && redelivered.keySet().containsAll(released);
            });
            produce(topic, "after", 0, 1);
            List<String> later = new ArrayList<>();
            Await.until("the new record", () -> {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    later.add(r.value());
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                c.commitSync();
                return later.contains("after0");
            });
            assertEquals(List.of("after0"), later, "nothing accepted, rejected or re-accepted comes back");
        }
        assertEquals(released, redelivered.keySet(), "exactly the released records were delivered again");
        redelivered.forEach((v, count) -> assertEquals(2, count, "delivery count of " + v));
    }

    /**
     * A member that closes without acknowledging what it was delivered
     * releases it: another member gets those records again, with a
     * delivery count of 2, and every record is delivered.
     */
    @Test
    @Tag("core")
    void closeWithoutAcknowledgingRedelivers() throws Exception {
        int n = 20;
        String topic = topicWith(n, "r");
        String group = shareGroup();
        Set<String> first = new HashSet<>();
        try (KafkaShareConsumer<String, String> c = shareConsumer(group, "explicit")) {
            c.subscribe(List.of(topic));
            Await.until("a first delivery", () -> {
                c.poll(Duration.ofMillis(200)).forEach(r -> first.add(r.value()));
                return !first.isEmpty();
            });
        } // closed with every delivered record unacknowledged
        Map<String, Integer> second = new HashMap<>();
        try (KafkaShareConsumer<String, String> c = shareConsumer(group, "implicit")) {
            c.subscribe(List.of(topic));
            Await.until("all " + n + " delivered", () -> {
                c.poll(Duration.ofMillis(200)).forEach(r -> second.put(r.value(), deliveryCount(r)));
                return second.size() == n;
            });
            c.commitSync();
        }
        for (String v : first) {
            assertEquals(2, second.get(v), "released by close, delivered again: " + v);
        }
        second.forEach((v, count) -> {
            if (!first.contains(v)) {
                assertEquals(1, count, v);
            }
        });
    }
    /**
     * Two members of one share group read a topic at once: each record is
     * acquired by one member at a time, so with every delivery accepted,
     * each record is delivered exactly once over the two.
     */
    @Test
    @Tag("core")
    void twoMembersShareTheRecords() throws Exception {
        int n = 400;
        String topic = Clients.unique("sharetopic");
        Clients.createTopic(kg, topic, 2);
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of())) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, i % 2, null, "r" + i));
            }
            p.flush();
        }
        String group = shareGroup();
        Map<String, Integer> seen = new HashMap<>();
        Set<Integer> byA = new HashSet<>(), byB = new HashSet<>();
        try (KafkaShareConsumer<String, String> a = shareConsumer(group, "implicit");
             KafkaShareConsumer<String, String> b = shareConsumer(group, "implicit")) {
            a.subscribe(List.of(topic));
            b.subscribe(List.of(topic));
            Await.until("all " + n + " delivered", () -> {
                for (ConsumerRecord<String, String> r : a.poll(Duration.ofMillis(100))) {
                    seen.merge(r.value(), 1, Integer::sum);
                    byA.add(r.partition());
                }
                for (ConsumerRecord<String, String> r : b.poll(Duration.ofMillis(100))) {
                    seen.merge(r.value(), 1, Integer::sum);
                    byB.add(r.partition());
                }
                return seen.size() == n;
            });
            a.commitSync();
            b.commitSync();
        }
        seen.forEach((v, count) -> assertEquals(1, count, v + " delivered once"));
    }
}
