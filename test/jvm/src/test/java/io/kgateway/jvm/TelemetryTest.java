package io.kgateway.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Client telemetry (KIP-714) with the Java client's defaults
 * (enable.metrics.push=true): a subscription set through Admin on a
 * CLIENT_METRICS resource, a producer that asks for it and pushes, and its
 * metrics on kgateway's /metrics with the producer's labels.
 */
@Tag("core")
class TelemetryTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void producerMetricsReachPrometheus() throws Exception {
        try (KGateway kg = KGateway.start(); Admin admin = kg.admin()) {
            ConfigResource sub = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, "java-producers");
            admin.incrementalAlterConfigs(Map.of(sub, List.of(
                    new AlterConfigOp(new ConfigEntry("metrics", "org.apache.kafka.producer."), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("interval.ms", "1000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("match", "client_software_name=apache-kafka-java"), AlterConfigOp.OpType.SET))))
                .all().get();
            Config described = admin.describeConfigs(List.of(sub)).all().get().get(sub);
            assertEquals("org.apache.kafka.producer.", described.get("metrics").value());
            assertEquals("1000", described.get("interval.ms").value());

            Properties p = kg.clientProps();
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "telemetry-producer");
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            int records = 25;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord<>("telemetry-topic", "k" + i, "v" + i)).get();
                }
                Uuid id = producer.clientInstanceId(Duration.ofSeconds(30));
                // The pushed record.send.total (deltas added up) reaches
                // every record sent, labelled with the producer.
                Pattern series = Pattern.compile(
                        "^kgateway_client_org_apache_kafka_producer_record_send_total\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
                String labels = Await.value("pushed record.send.total of " + id + " on /metrics", () -> {
                    Matcher m = series.matcher(scrape(kg));
                    while (m.find()) {
                        if (m.group(1).contains("client_instance_id=\"" + id + "\"") && Double.parseDouble(m.group(2)) >= records) {
                            return m.group(1);
                        }
                    }
                    return null;
                });
                assertTrue(labels.contains("client_id=\"telemetry-producer\""), labels);
                assertTrue(labels.contains("client_software_name=\"apache-kafka-java\""), labels);
                assertTrue(labels.contains("principal=\"User:ANONYMOUS\""), labels);
            }
        }
    }

    private static String scrape(KGateway kg) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + kg.metricsAddr() + "/metrics")).build();
        return HTTP.send(req, HttpResponse.BodyHandlers.ofString()).body();
    }
}
