package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** KafkaProducer against kgateway: what the producer documentation promises the client sees. */
class ProducerTest {
    private static KGateway kg;

    @BeforeAll
    static void start() {
        kg = KGateway.start();
    }

    @AfterAll
    static void stop() {
        if (kg != null) {
            kg.close();
        }
    }

    private static List<ConsumerRecord<String, String>> readAll(String topic, int partitions, int n) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        return Clients.readN(kg, tps, n, Map.of());
    }

    /**
     * enable.idempotence with acks=all: every record is written exactly once,
     * in send order per partition, at the offset its RecordMetadata names.
     */
    @Test
    @Tag("core")
    void idempotentAcksAllWritesEachRecordOnceInOrder() throws Exception {
        String topic = Clients.unique("idem");
        Clients.createTopic(kg, topic, 3);
        int n = 3000;
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5, ProducerConfig.LINGER_MS_CONFIG, 5))) {
            for (int i = 0; i < n; i++) {
                acks.add(p.send(new ProducerRecord<>(topic, i % 3, "k" + i, "v" + i)));
            }
            p.flush();
        }
        Map<String, Long> offsetOf = new HashMap<>();
        for (int i = 0; i < n; i++) {
            RecordMetadata md = acks.get(i).get();
            assertEquals(i % 3, md.partition());
            offsetOf.put("v" + i, md.offset());
        }
        List<ConsumerRecord<String, String>> got = readAll(topic, 3, n);
        assertEquals(n, got.size(), "each record exactly once");
        Map<Integer, Integer> last = new HashMap<>();
        for (ConsumerRecord<String, String> r : got) {
            assertEquals(offsetOf.get(r.value()), r.offset(), "offset of " + r.value());
            int i = Integer.parseInt(r.value().substring(1));
            assertEquals(i % 3, r.partition());
            assertTrue(last.getOrDefault(r.partition(), -1) < i, "send order within partition " + r.partition());
            last.put(r.partition(), i);
        }
    }

    /** compression.type: every codec's batches come back to the consumer as the records sent. */
    @ParameterizedTest
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    @Tag("core")
    void everyCodecRoundTrips(String codec) throws Exception {
        String topic = Clients.unique("codec-" + codec);
        Clients.createTopic(kg, topic, 1);
        int n = 500;
        List<String> sent = new ArrayList<>();
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(
                ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024))) {
            for (int i = 0; i < n; i++) {
                String v = codec + "-" + i + "-" + "x".repeat(i % 97);
                sent.add(v);
                p.send(new ProducerRecord<>(topic, 0, "key-" + i, v));
            }
            p.flush();
        }
        List<ConsumerRecord<String, String>> got = readAll(topic, 1, n);
        assertEquals(sent, got.stream().map(ConsumerRecord::value).toList());
        for (int i = 0; i < n; i++) {
            assertEquals("key-" + i, got.get(i).key());
            assertEquals(i, got.get(i).offset());
        }
    }

    /** Headers: keys in order, duplicates kept, null and binary values preserved. */
    @Test
    @Tag("core")
    void headersRoundTrip() throws Exception {
        String topic = Clients.unique("headers");
        Clients.createTopic(kg, topic, 1);
        byte[] binary = {0, 1, (byte) 0xff, 0x7f, (byte) 0x80};
        List<Header> headers = List.of(
            new RecordHeader("trace", "abc".getBytes(StandardCharsets.UTF_8)),
            new RecordHeader("dup", "1".getBytes(StandardCharsets.UTF_8)),
            new RecordHeader("dup", "2".getBytes(StandardCharsets.UTF_8)),
            new RecordHeader("null", (byte[]) null),
            new RecordHeader("bin", binary),
            new RecordHeader("ünïcödé", new byte[0]));
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of())) {
            p.send(new ProducerRecord<>(topic, 0, "k", "with-headers", headers)).get();
            p.send(new ProducerRecord<>(topic, 0, "k", "without")).get();
        }
        List<ConsumerRecord<String, String>> got = readAll(topic, 1, 2);
        Header[] h = got.get(0).headers().toArray();
        assertEquals(headers.size(), h.length);
        for (int i = 0; i < h.length; i++) {
            assertEquals(headers.get(i).key(), h[i].key());
            assertArrayEquals(headers.get(i).value(), h[i].value(), "header " + i);
        }
        List<String> dups = new ArrayList<>();
        got.get(0).headers().headers("dup").forEach(x -> dups.add(new String(x.value(), StandardCharsets.UTF_8)));
        assertEquals(List.of("1", "2"), dups);
        assertEquals(0, got.get(1).headers().toArray().length);
    }

    /**
     * max.message.bytes bounds the record batch: a batch of exactly the
     * limit is stored; one byte more fails the send with
     * RecordTooLargeException (MESSAGE_TOO_LARGE), and nothing is stored.
     */
    @Test
    @Tag("core")
    void recordBatchAtMaxMessageBytesAndJustOver() throws Exception {
        String topic = Clients.unique("large");
        int limit = 300_000;
        try (var admin = kg.admin()) {
            Clients.createTopic(admin, topic, 1, Map.of("max.message.bytes", String.valueOf(limit)));
        }
        int fits = valueSizeForBatch(limit);
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * limit, ProducerConfig.BATCH_SIZE_CONFIG, 16384,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "none", ProducerConfig.LINGER_MS_CONFIG, 0))) {
            RecordMetadata md = p.send(new ProducerRecord<>(topic, 0, null, "a".repeat(fits))).get();
            assertEquals(0, md.offset());
            ExecutionException e = assertThrows(ExecutionException.class,
                () -> p.send(new ProducerRecord<>(topic, 0, null, "b".repeat(fits + 1))).get());
            assertInstanceOf(RecordTooLargeException.class, e.getCause());
            RecordMetadata after = p.send(new ProducerRecord<>(topic, 0, null, "small")).get();
            assertEquals(1, after.offset(), "the refused batch took no offset");
        }
        List<ConsumerRecord<String, String>> got = Clients.readN(kg, List.of(new TopicPartition(topic, 0)), 2,
            Map.of(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4 * limit));
        assertEquals(fits, got.get(0).value().length());
        assertEquals("small", got.get(1).value());
    }

    /** The value size whose one-record uncompressed batch (null key, no headers) is exactly batchBytes. */
    private static int valueSizeForBatch(int batchBytes) {
        for (int v = batchBytes - DefaultRecordBatch.RECORD_BATCH_OVERHEAD; v > 0; v--) {
            int size = DefaultRecordBatch.RECORD_BATCH_OVERHEAD + DefaultRecord.sizeInBytes(0, 0L, 0, v, new Header[0]);
            if (size == batchBytes) {
                return v;
            }
            if (size < batchBytes) {
                throw new IllegalStateException("no value size gives a batch of " + batchBytes);
            }
        }
        throw new IllegalStateException("batch too small");
    }

    /**
     * delivery.timeout.ms across a restart: records sent while kgateway is
     * stopped are retried and, once it is back within the timeout, each is
     * acknowledged and stored exactly once (idempotence), in send order.
     *
     * <p>The producer does not rebootstrap (metadata.recovery.strategy
     * none). The client's default since Kafka 4.0, rebootstrap, forgets
     * the cluster's metadata once its only broker has been unreachable for
     * a reconnect backoff and goes back to bootstrap.servers; every send()
     * then blocks in waitOnMetadata for max.block.ms (60 s) until a broker
     * answers, and here only the restart after those sends would. Whether
     * the client rebootstraps before the sends are done is a race with the
     * old process's exit (a slow one, a loaded machine), so this test hung
     * at times. With none the client keeps its metadata and buffers the
     * records while kgateway is down, which is what the test is about.
     */
    @Test
    @Tag("core")
    void sendsDuringRestartAreDeliveredOnce() throws Exception {
        String topic = Clients.unique("restart");
        Clients.createTopic(kg, topic, 1);
        Map<Integer, Object> outcome = new ConcurrentHashMap<>();
        int before = 100, during = 200;
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000,
                ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 50, ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500,
                CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none"))) {
            for (int i = 0; i < before; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, "r" + i)).get();
            }
            kg.stop();
            for (int i = before; i < before + during; i++) {
                int id = i;
                p.send(new ProducerRecord<>(topic, 0, null, "r" + i),
                    (md, e) -> outcome.put(id, e != null ? e : md));
            }
            kg.startAgain();
            p.flush();
        }
        for (int i = before; i < before + during; i++) {
            Object o = outcome.get(i);
            assertInstanceOf(RecordMetadata.class, o, "record " + i + " acknowledged within delivery.timeout.ms");
        }
        List<ConsumerRecord<String, String>> got = readAll(topic, 1, before + during);
        List<String> want = new ArrayList<>();
        for (int i = 0; i < before + during; i++) {
            want.add("r" + i);
        }
        assertEquals(want, got.stream().map(ConsumerRecord::value).toList());
        for (int i = before; i < before + during; i++) {
            assertEquals(i, ((RecordMetadata) outcome.get(i)).offset());
        }
    }

    /**
     * Idempotence across kill -9 mid-stream: records acknowledged before
     * the kill survive it, the retried ones are not duplicated, and every
     * acknowledged record sits at the offset its RecordMetadata names.
     */
    @Test
    @Tag("core")
    void idempotentAcrossKill() throws Exception {
        String topic = Clients.unique("idem-kill");
        Clients.createTopic(kg, topic, 1);
        int n = 3000;
        Map<Integer, Object> outcome = new ConcurrentHashMap<>();
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000,
                ProducerConfig.LINGER_MS_CONFIG, 1, ProducerConfig.BATCH_SIZE_CONFIG, 2048,
                ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200))) {
            for (int i = 0; i < n; i++) {
                int id = i;
                p.send(new ProducerRecord<>(topic, 0, null, "r" + i), (md, e) -> outcome.put(id, e != null ? e : md));
                if (i == n / 3) {
                    Await.until("some acknowledged", () -> outcome.size() > 10);
                    kg.kill();
                    kg.startAgain();
                }
            }
            p.flush();
        }
        List<ConsumerRecord<String, String>> got = readAll(topic, 1, n);
        Map<String, Long> at = new HashMap<>();
        for (ConsumerRecord<String, String> r : got) {
            assertNull(at.put(r.value(), r.offset()), r.value() + " stored twice");
        }
        for (int i = 0; i < n; i++) {
            Object o = outcome.get(i);
            assertInstanceOf(RecordMetadata.class, o, "record " + i);
            assertEquals(((RecordMetadata) o).offset(), at.get("r" + i), "offset of r" + i);
        }
    }

    /**
     * delivery.timeout.ms elapses while kgateway is down: each send fails
     * with org.apache.kafka.common.errors.TimeoutException, and none of
     * those records is in the log once kgateway is back. (No rebootstrap,
     * as in sendsDuringRestartAreDeliveredOnce: the sends must reach the
     * accumulator while kgateway is down, not block in send.)
     */
    @Test
    void sendsFailWithTimeoutWhenServerStaysDown() throws Exception {
        String topic = Clients.unique("timeout");
        Clients.createTopic(kg, topic, 1);
        Map<Integer, Exception> failed = new ConcurrentHashMap<>();
        try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 3_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000,
                ProducerConfig.LINGER_MS_CONFIG, 0, CommonClientConfigs.METADATA_RECOVERY_STRATEGY_CONFIG, "none"))) {
            p.send(new ProducerRecord<>(topic, 0, null, "first")).get();
            kg.stop();
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                int id = i;
                fs.add(p.send(new ProducerRecord<>(topic, 0, null, "lost" + i), (md, e) -> {
                    if (e != null) {
                        failed.put(id, e);
                    }
                }));
            }
            Await.until("every send fails", () -> failed.size() == 20);
            for (Exception e : failed.values()) {
                assertInstanceOf(TimeoutException.class, e);
            }
            kg.startAgain();
            RecordMetadata md = p.send(new ProducerRecord<>(topic, 0, null, "after")).get();
            assertEquals(1, md.offset(), "no timed-out record took an offset");
        }
        List<ConsumerRecord<String, String>> got = readAll(topic, 1, 2);
        assertEquals(Arrays.asList("first", "after"), got.stream().map(ConsumerRecord::value).toList());
    }
}
