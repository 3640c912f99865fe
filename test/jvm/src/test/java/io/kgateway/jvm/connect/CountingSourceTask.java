package io.kgateway.jvm.connect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/** The task of {@link CountingSourceConnector}. */
public class CountingSourceTask extends SourceTask {
    private String topic;
    private long count;
    private int batch;
    private long sleepMs;
    private Map<String, String> partition;
    private long next;

    @Override
    public void start(Map<String, String> props) {
        AbstractConfig c = new AbstractConfig(CountingSourceConnector.CONFIG, props);
        topic = c.getString("topic");
        count = c.getLong("count");
        batch = c.getInt("batch");
        sleepMs = c.getLong("poll.sleep.ms");
        partition = Map.of("counter", props.get("name"));
        Map<String, Object> offset = context.offsetStorageReader().offset(partition);
        next = offset == null ? 0 : ((Number) offset.get("next")).longValue();
        try {
            Files.writeString(Path.of(c.getString("starts.file")), next + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.SYNC);
        } catch (IOException e) {
            throw new ConnectException(e);
        }
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        Thread.sleep(next >= count ? 100 : sleepMs);
        if (next >= count) {
            return null;
        }
        List<SourceRecord> out = new ArrayList<>();
        for (long end = Math.min(count, next + batch); next < end; next++) {
            out.add(new SourceRecord(partition, Map.of("next", next + 1), topic, null,
                    Schema.STRING_SCHEMA, "k" + next, Schema.STRING_SCHEMA, Long.toString(next)));
        }
        return out;
    }

    @Override
    public void stop() {}

    @Override
    public String version() {
        return "1";
    }
}
