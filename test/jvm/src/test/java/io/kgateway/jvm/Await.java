package io.kgateway.jvm;

import java.time.Duration;
import java.time.Instant;

/**
 * Waits on conditions with a deadline: the deadline bounds a failure, it is
 * never a way to let something happen. The condition is polled with a short
 * back-off (5 ms doubling to 100 ms); an exception from it counts as "not
 * yet" and the last one is attached to the failure.
 */
public final class Await {
    /** The default bound of every wait in these tests. */
    public static final Duration DEADLINE = Duration.ofSeconds(60);

    private Await() {}

    /** A condition that may throw (a client call, a file read). */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** A value that may not be there yet: null (or an exception) means "not yet". */
    @FunctionalInterface
    public interface Probe<T> {
        T get() throws Exception;
    }

    /** Polls condition until it holds; fails with what after timeout. */
    public static void until(Duration timeout, String what, Condition condition) {
        value(timeout, what, () -> condition.holds() ? Boolean.TRUE : null);
    }

    /** until with the default deadline. */
    public static void until(String what, Condition condition) {
        until(DEADLINE, what, condition);
    }

    /** Polls probe until it returns non-null and returns that value. */
    public static <T> T value(Duration timeout, String what, Probe<T> probe) {
        Instant deadline = Instant.now().plus(timeout);
        long backoff = 5;
        Exception last = null;
        while (true) {
            try {
                T v = probe.get();
                if (v != null) {
                    return v;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            } catch (Exception e) {
                last = e;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("not within " + timeout + ": " + what, last);
            }
            try {
                Thread.sleep(backoff); // poll interval, not a wait for an effect
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
            backoff = Math.min(backoff * 2, 100);
        }
    }

    /** value with the default deadline. */
    public static <T> T value(String what, Probe<T> probe) {
        return value(DEADLINE, what, probe);
    }
}
