package io.kgateway.jvm.streams;

import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * One instance of the exactly-once Streams application, run as its own JVM
 * so that a test can kill -9 it.
 *
 * <p>Topology (see {@link Orders}): orders keyed by order id are re-keyed
 * by customer (a repartition topic), grouped and aggregated into a
 * count:sum per customer (state store {@code totals}, changelog
 * {@code <app>-totals-changelog}, compacted, created by Streams); every
 * aggregate update is joined (KStream-KTable, co-partitioned) with the
 * customers table and written to the output topic. The record cache is
 * off, so each input order yields exactly one output record.
 *
 * <p>Arguments: {@code key=value} pairs, each a Streams property, plus
 * {@code orders}, {@code customers}, {@code output} (topic names) and
 * {@code throttle.ms} (sleep per order, so that a kill lands mid-stream).
 * Prints {@code STATE <new>} on each state change.
 */
public final class EosApp {
    /** Stream threads replaced after an error before the instance gives up. */
    static final int MAX_THREAD_REPLACEMENTS = 5;

    private EosApp() {}

    static Topology topology(String orders, String customers, String output, long throttleMs) {
        StreamsBuilder b = new StreamsBuilder();
        KTable<String, String> regions =
                b.table(customers, Consumed.with(Serdes.String(), Serdes.String()),
                        Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("customers"));
        KTable<String, String> totals = b.stream(orders, Consumed.with(Serdes.String(), Serdes.String()))
                .peek((k, v) -> throttle(throttleMs))
                .selectKey((orderId, v) -> v.split(":")[0])
                .groupByKey(Grouped.with("by-customer", Serdes.String(), Serdes.String()))
                .aggregate(() -> "0:0", (customer, order, agg) -> {
                    String[] a = agg.split(":");
                    long amount = Long.parseLong(order.split(":")[1]);
                    return (Long.parseLong(a[0]) + 1) + ":" + (Long.parseLong(a[1]) + amount);
                }, Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("totals")
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.String()));
        totals.toStream()
                .join(regions, (agg, region) -> region + ":" + agg)
                .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return b.build();
    }

    private static void throttle(long ms) {
        if (ms <= 0) {
            return;
        }
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        for (String a : args) {
            int eq = a.indexOf('=');
            p.setProperty(a.substring(0, eq), a.substring(eq + 1));
        }
        String orders = (String) p.remove("orders");
        String customers = (String) p.remove("customers");
        String output = (String) p.remove("output");
        long throttleMs = Long.parseLong((String) p.remove("throttle.ms"));
        p.putIfAbsent(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.putIfAbsent(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.putIfAbsent(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.putIfAbsent(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());

        KafkaStreams streams = new KafkaStreams(topology(orders, customers, output, throttleMs), p);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        // A thread that dies of an error (a broker gone too long, say) is
        // replaced, so the instance lives until it is killed; an error that
        // keeps coming back (an API the broker lacks) ends the instance, so
        // that the test sees it exit instead of waiting out its deadline.
        AtomicInteger replaced = new AtomicInteger();
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("THREAD ERROR " + e);
            e.printStackTrace(System.out);
            return replaced.incrementAndGet() <= MAX_THREAD_REPLACEMENTS
                ? StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD
                : StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(streams::close));
        streams.start();
        done.await();
        System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
    }
}
