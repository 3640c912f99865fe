package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The harness itself: a real kgateway that keeps its data and ports across SIGTERM and kill -9. */
@Tag("core")
class KGatewayTest {
    @Test
    void restartsKeepDataAndAddress() throws Exception {
        try (KGateway kg = KGateway.start(Map.of("num.partitions", "2"))) {
            String addr = kg.bootstrap();
            String topic = Clients.unique("harness");
            try (Admin admin = kg.admin()) {
                assertEquals(1, Clients.get(admin.describeCluster().nodes()).size());
            }
            try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                p.send(new ProducerRecord<>(topic, 0, "k", "before-stop")).get();
            }
            kg.restart(); // SIGTERM, exit 0, start again
            assertEquals(addr, kg.bootstrap());
            try (KafkaProducer<String, String> p = Clients.producer(kg, Map.of())) {
                p.send(new ProducerRecord<>(topic, 0, "k", "before-kill")).get();
            }
            long pid = kg.pid();
            kg.kill();
            assertFalse(kg.isRunning());
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
            kg.startAgain();
            assertEquals(addr, kg.bootstrap());
            List<ConsumerRecord<String, String>> got =
                Clients.readN(kg, List.of(new TopicPartition(topic, 0)), 2, Map.of());
            assertEquals(List.of("before-stop", "before-kill"), got.stream().map(ConsumerRecord::value).toList());
            assertTrue(kg.metricsAddr() != null);
        }
    }
}
