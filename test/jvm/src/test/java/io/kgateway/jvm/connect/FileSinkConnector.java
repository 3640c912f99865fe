package io.kgateway.jvm.connect;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * A sink connector that appends each record's value, one per line, to a
 * file ({@code file}); every task appends to the same file. A line is
 * written and forced to disk before the offsets covering it are committed
 * ({@link FileSinkTask#flush}), so after a crash the file holds every
 * committed record and possibly some records again (at least once).
 */
public class FileSinkConnector extends SinkConnector {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "file to append to");

    private Map<String, String> props;

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return FileSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> l = new ArrayList<>();
        for (int i = 0; i < maxTasks; i++) {
            l.add(props);
        }
        return l;
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
}
