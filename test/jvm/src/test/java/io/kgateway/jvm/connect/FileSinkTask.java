package io.kgateway.jvm.connect;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/** The task of {@link FileSinkConnector}. */
public class FileSinkTask extends SinkTask {
    private FileChannel out;

    @Override
    public void start(Map<String, String> props) {
        try {
            out = FileChannel.open(Path.of(props.get("file")), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new ConnectException(e);
        }
    }

    @Override
    public void put(Collection<SinkRecord> records) {
        StringBuilder b = new StringBuilder();
        for (SinkRecord r : records) {
            b.append(r.value()).append('\n');
        }
        try {
            ByteBuffer buf = ByteBuffer.wrap(b.toString().getBytes(StandardCharsets.UTF_8));
            while (buf.hasRemaining()) {
                out.write(buf);
            }
        } catch (IOException e) {
            throw new ConnectException(e);
        }
    }

    @Override
    public void flush(Map<TopicPartition, OffsetAndMetadata> offsets) {
        try {
            out.force(false);
        } catch (IOException e) {
            throw new ConnectException(e);
        }
    }

    @Override
    public void stop() {
        try {
            if (out != null) {
                out.close();
            }
        } catch (IOException e) {
            throw new ConnectException(e);
        }
    }

    @Override
    public String version() {
        return "1";
    }
}
