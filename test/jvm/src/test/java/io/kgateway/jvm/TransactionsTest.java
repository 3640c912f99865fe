package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Exactly-once read-process-write (KIP-98, KIP-447; transaction version 2
 * as the 4.x client negotiates it) against kgateway.
 */
class TransactionsTest {
    static final int PARTITIONS = 2;

    /**
     * The application: reads input at read_committed, writes one output
     * record per input record and commits its input offsets in the same
     * transaction (sendOffsetsToTransaction). On any error it closes its
     * clients and starts over with new ones: the new producer's
     * initTransactions aborts whatever transaction the old one left open,
     * and the new consumer resumes at the committed offsets.
     */
    static final class App implements Runnable {
        final KGateway kg;
        final String input, output, group, txnId;
        final AtomicInteger commits = new AtomicInteger();
        final AtomicInteger processed = new AtomicInteger(); // input records of committed transactions
        final ConcurrentLinkedQueue<Exception> errors = new ConcurrentLinkedQueue<>();
        volatile boolean stop;

        App(KGateway kg, String input, String output, String group, String txnId) {
            this.kg = kg;
            this.input = input;
            this.output = output;
            this.group = group;
            this.txnId = txnId;
        }

        @Override
        public void run() {
            while (!stop) {
                KafkaProducer<String, String> p = null;
                KafkaConsumer<String, String> c = null;
                try {
                    p = Clients.producer(kg, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId,
                        ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000,
                        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 4_000, ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200));
                    p.initTransactions();
                    c = Clients.consumer(kg, Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20,
                        ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000, ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 4_000));
                    List<TopicPartition> tps = new ArrayList<>();
                    for (int i = 0; i < PARTITIONS; i++) {
                        tps.add(new TopicPartition(input, i));
                    }
                    c.assign(tps);
                    while (!stop) {
                        ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(100));
                        if (recs.isEmpty()) {
                            continue;
                        }
                        p.beginTransaction();
                        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                        for (ConsumerRecord<String, String> r : recs) {
                            p.send(new ProducerRecord<>(output, r.partition(), r.key(), "out-" + r.value()));
                            next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                        }
                        p.sendOffsetsToTransaction(next, c.groupMetadata());
                        p.commitTransaction();
                        processed.addAndGet(recs.count());
                        commits.incrementAndGet();
                    }
                } catch (Exception e) {
                    errors.add(e);
                } finally {
                    if (p != null) {
                        p.close(Duration.ZERO);
                    }
                    if (c != null) {
                        c.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ZERO));
                    }
                }
            }
        }
    }

    /**
     * kill -9 of kgateway in the middle of the stream: after the restart the
     * application recovers, and the output, read at read_committed, holds
     * each input record exactly once.
     */
    @Test
    @Tag("core")
    void readProcessWriteExactlyOnceAcrossKill() throws Exception {
        readProcessWrite(2000, 1);
    }

    /** The same through three kills, for test-jvm-all. */
    @Test
    void readProcessWriteExactlyOnceAcrossThreeKills() throws Exception {
        readProcessWrite(6000, 3);
    }

    void readProcessWrite(int n, int kills) throws Exception {
        try (KGateway kg = KGateway.start()) {
            String input = Clients.unique("in"), output = Clients.unique("out");
            String group = Clients.unique("g-eos"), txnId = Clients.unique("txn");
            try (Admin admin = kg.admin()) {
                Clients.createTopic(admin, input, PARTITIONS);
                Clients.createTopic(admin, output, PARTITIONS);
            }
            try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                for (int i = 0; i < n; i++) {
                    p.send(new ProducerRecord<>(input, i % PARTITIONS, "k" + i, "v" + i));
                }
                p.flush();
            }
            App app = new App(kg, input, output, group, txnId);
            Thread t = new Thread(app, "eos-app");
            t.start();
            try {
                for (int k = 0; k < kills; k++) {
                    int target = app.commits.get() + 10;
                    Await.until("10 more transactions committed", () -> app.commits.get() >= target);
                    kg.kill();
                    int before = app.commits.get();
                    assertTrue(app.processed.get() < n, "killed mid-stream: " + app.processed.get() + " of " + n + " done");
                    kg.startAgain();
                    Await.until("the app commits again after the restart", () -> app.commits.get() > before);
                }
                try (Admin admin = kg.admin()) {
                    Await.until("every input offset committed", () -> {
                        Map<TopicPartition, OffsetAndMetadata> m =
                            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                        for (int i = 0; i < PARTITIONS; i++) {
                            OffsetAndMetadata o = m.get(new TopicPartition(input, i));
                            if (o == null || o.offset() != n / PARTITIONS) {
                                return false;
                            }
                        }
                        return true;
                    });
                }
            } finally {
                app.stop = true;
                t.join(Await.DEADLINE.toMillis());
            }
            // The app may or may not have seen an error: the clients retry
            // across the restart on their own. Either way, exactly once:
            Map<String, Integer> count = readCommitted(kg, output);
            assertEquals(n, count.values().stream().mapToInt(Integer::intValue).sum(), "output size");
            for (int i = 0; i < n; i++) {
                assertEquals(1, count.getOrDefault("out-v" + i, 0), "out-v" + i + " exactly once");
            }
        }
    }

    /**
     * kill -9 with a transaction open: after the restart the next producer
     * of the transactional id (initTransactions) aborts it, and
     * read_committed readers see only committed transactions, each once.
     */
    @Test
    @Tag("core")
    void openTransactionAbortedAfterKill() throws Exception {
        try (KGateway kg = KGateway.start()) {
            String output = Clients.unique("out"), txnId = Clients.unique("txn");
            Clients.createTopic(kg, output, PARTITIONS);
            Map<String, Object> cfg = Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
            KafkaProducer<String, String> first = Clients.producer(kg, cfg);
            try {
                first.initTransactions();
                first.beginTransaction();
                first.send(new ProducerRecord<>(output, 0, "k", "committed-0")).get();
                first.send(new ProducerRecord<>(output, 1, "k", "committed-1")).get();
                first.commitTransaction();
                first.beginTransaction();
                first.send(new ProducerRecord<>(output, 0, "k", "open-0")).get();
                first.send(new ProducerRecord<>(output, 1, "k", "open-1")).get();
                kg.kill(); // the transaction is open, its records are in the log
            } finally {
                first.close(Duration.ZERO);
            }
            kg.startAgain();
            try (KafkaProducer<String, String> second = Clients.producer(kg, Map.of(
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId))) {
                second.initTransactions();
                second.beginTransaction();
                second.send(new ProducerRecord<>(output, 0, "k", "after-0")).get();
                second.commitTransaction();
            }
            Map<String, Integer> count = readCommitted(kg, output);
            assertEquals(Map.of("committed-0", 1, "committed-1", 1, "after-0", 1), count);
        }
    }

    /**
     * Everything of topic at read_committed once every transaction on it is
     * marked: value → times seen. EndTxn answers once the decision is
     * durable, as Kafka's does, and the markers follow; until they are in,
     * the last stable offset stays below the committed records. So the
     * read waits for the last stable offset to reach the high watermark
     * (the tests leave no transaction open), then reads up to it.
     */
    static Map<String, Integer> readCommitted(KGateway kg, String topic) {
        Map<String, Integer> count = new HashMap<>();
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        try (KafkaConsumer<String, String> c = Clients.consumer(kg, Map.of(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
             KafkaConsumer<String, String> u = Clients.consumer(kg, Map.of())) {
            Map<TopicPartition, Long> end = Await.value("every transaction on " + topic + " marked", () -> {
                Map<TopicPartition, Long> lso = c.endOffsets(tps); // the LSO at read_committed
                return lso.equals(u.endOffsets(tps)) ? lso : null;
            });
            c.assign(tps);
            c.seekToBeginning(tps);
            Await.until("read to the last stable offset " + end, () -> {
                c.poll(Duration.ofMillis(100)).forEach(r -> count.merge(r.value(), 1, Integer::sum));
                for (TopicPartition tp : tps) {
                    if (c.position(tp) < end.get(tp)) {
                        return false;
                    }
                }
                return true;
            });
        }
        return count;
    }
}
