package io.kgateway.jvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Java main class run as its own process on the test classpath, so that a
 * test can kill -9 it (a Kafka Streams instance, a Connect worker).
 *
 * <p>Mechanism. The child runs {@code java -cp <test classpath> <main>}:
 * the classpath is surefire's {@code surefire.test.class.path} (the whole
 * test classpath, which {@code java.class.path} is not when surefire uses a
 * manifest-only jar), else {@code java.class.path}. Its stdout and stderr
 * go to one file under target/process-logs; log4j2 logs at WARN (INFO for
 * a few lifecycle loggers) through subprocess-log4j2.properties.
 *
 * <p>Invariants. One process per instance; close() kills it.
 */
public final class JavaProcess implements AutoCloseable {
    private static final AtomicInteger STARTS = new AtomicInteger();

    private final String name;
    private final Process process;
    private final Path log;

    private JavaProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts mainClass with jvmArgs (e.g. -Xmx256m) and args. */
    public static JavaProcess start(String name, String mainClass, List<String> jvmArgs, List<String> args) {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-Dlog4j2.configurationFile=" + log4jConfig());
        cmd.add("-cp");
        cmd.add(cp);
        cmd.add(mainClass);
        cmd.addAll(args);
        try {
            Path logs = KGateway.repoRoot().resolve("test/jvm/target/process-logs");
            Files.createDirectories(logs);
            Path log = logs.resolve(name + "-" + ProcessHandle.current().pid() + "-" + STARTS.incrementAndGet() + ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
            return new JavaProcess(name, pb.start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String log4jConfig() {
        try {
            return Path.of(JavaProcess.class.getResource("subprocess-log4j2.properties").toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    /** The process's output so far. */
    public String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** The last lines of the output, for failure messages. */
    public String tail() {
        String[] lines = output().split("\n");
        return name + " (" + log + "):\n"
            + String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 60), lines.length));
    }

    /** kill -9, and wait until it is gone. */
    public void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(Await.DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError(name + " survived SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }

    @Override
    public String toString() {
        return name + "[" + process.pid() + "]";
    }
}
