package io.kgateway.kafkadiff;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.shaded.io.opentelemetry.proto.metrics.v1.MetricsData;

/**
 * The client telemetry plugin Apache Kafka needs to serve
 * GetTelemetrySubscriptions and PushTelemetry (KIP-714): a metrics
 * reporter that provides a ClientTelemetryExporter. Its exporter decodes
 * each pushed payload as OTLP MetricsData, as an exporter forwarding it
 * would, so that a payload that is not one fails the push (INVALID_RECORD)
 * as it does in kgateway; it keeps nothing.
 */
public class TelemetryExporter implements MetricsReporter, ClientTelemetryExporterProvider {
    @Override
    public void configure(Map<String, ?> configs) {}

    @Override
    public void init(List<KafkaMetric> metrics) {}

    @Override
    public void metricChange(KafkaMetric metric) {}

    @Override
    public void metricRemoval(KafkaMetric metric) {}

    @Override
    public void close() {}

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return (context, payload) -> {
            try {
                MetricsData.parseFrom(payload.data());
            } catch (Exception e) {
                throw new IllegalArgumentException("not OTLP MetricsData", e);
            }
        };
    }
}
