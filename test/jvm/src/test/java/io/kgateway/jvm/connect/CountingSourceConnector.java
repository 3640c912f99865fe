package io.kgateway.jvm.connect;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A source connector that writes the numbers 0..count-1, in order, to one
 * topic, one task. Its position is its source offset: partition
 * {@code {"counter": <name>}}, offset {@code {"next": n}}, so a restarted
 * task resumes where the last committed offset says. It declares support
 * for exactly-once delivery (KIP-618): it is deterministic and keeps no
 * position of its own besides the source offset.
 *
 * <p>Configuration: {@code topic}, {@code count}, {@code batch} (records
 * per poll), {@code poll.sleep.ms} (pause between polls, so that a kill
 * lands mid-stream) and {@code starts.file} (each task start appends the
 * position it resumed from, so a test can see where it restarted).
 */
public class CountingSourceConnector extends SourceConnector {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "topic to write to")
            .define("count", ConfigDef.Type.LONG, ConfigDef.Importance.HIGH, "how many numbers")
            .define("batch", ConfigDef.Type.INT, 100, ConfigDef.Importance.LOW, "records per poll")
            .define("poll.sleep.ms", ConfigDef.Type.LONG, 0L, ConfigDef.Importance.LOW, "pause per poll")
            .define("starts.file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "task starts log");

    private Map<String, String> props;

    @Override
    public void start(Map<String, String> props) {
        CONFIG.parse(props);
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return CountingSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(props);
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public String version() {
        return "1";
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> config) {
        return ExactlyOnceSupport.SUPPORTED;
    }
}
