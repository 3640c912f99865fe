package io.kgateway.jvm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Client helpers shared by the JVM tests: String producers and consumers of a kgateway. */
public final class Clients {
    private Clients() {}

    /** A name unique to this run, for topics, groups and transactional ids. */
    public static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    public static KafkaProducer<String, String> producer(KGateway kg, Map<String, Object> extra) {
        Properties p = kg.clientProps();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    public static KafkaConsumer<String, String> consumer(KGateway kg, Map<String, Object> extra) {
        Properties p = kg.clientProps();
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    public static void createTopic(Admin admin, String topic, int partitions) {
        createTopic(admin, topic, partitions, Map.of());
    }

    public static void createTopic(Admin admin, String topic, int partitions, Map<String, String> configs) {
        try {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get();
        } catch (InterruptedException | ExecutionException e) {
            throw new AssertionError("create topic " + topic, e);
        }
    }

    public static void createTopic(KGateway kg, String topic, int partitions) {
        try (Admin admin = kg.admin()) {
            createTopic(admin, topic, partitions);
        }
    }

    /**
     * Reads partitions from the beginning with an assigned (group-less)
     * consumer until n records arrived; fails at the deadline with what
     * arrived.
     */
    public static List<ConsumerRecord<String, String>> readN(KGateway kg, Collection<TopicPartition> tps, int n,
                                                             Map<String, Object> extra) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c = consumer(kg, extra)) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Await.until("read " + n + " records of " + tps, () -> {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= n;
            });
        }
        return out;
    }

    public static <T> T get(org.apache.kafka.common.KafkaFuture<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
