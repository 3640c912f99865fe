package io.kgateway.jvm.streams;

import java.util.Map;
import java.util.TreeMap;

/**
 * The deterministic input of the exactly-once Streams tests and the
 * aggregates it must produce.
 *
 * <p>Order {@code i} (key {@code "o<i>"}) belongs to customer
 * {@code i % CUSTOMERS} and has amount {@code (i * 7) % 100 + 1}; customer
 * {@code c} lives in region {@code "r" + (c % 5)}. {@link EosApp}'s topology
 * re-keys the orders by customer, counts and sums them per customer and
 * joins each new aggregate with the customer's region, writing
 * {@code "<region>:<count>:<sum>"} under the customer's key.
 */
public final class Orders {
    /** Number of distinct customers. */
    public static final int CUSTOMERS = 37;

    private Orders() {}

    public static String orderKey(int i) {
        return "o" + i;
    }

    public static String customer(int c) {
        return String.format("c%02d", c);
    }

    public static String region(int c) {
        return "r" + (c % 5);
    }

    public static int amount(int i) {
        return (i * 7) % 100 + 1;
    }

    /** The value of order {@code i}: {@code "<customer>:<amount>"}. */
    public static String orderValue(int i) {
        return customer(i % CUSTOMERS) + ":" + amount(i);
    }

    /** The aggregate of one customer: how many orders and their total. */
    public record Total(String region, long count, long sum) {
        public static Total parse(String v) {
            String[] p = v.split(":");
            return new Total(p[0], Long.parseLong(p[1]), Long.parseLong(p[2]));
        }

        @Override
        public String toString() {
            return region + ":" + count + ":" + sum;
        }
    }

    /** The final aggregate of every customer after orders 0..n-1. */
    public static Map<String, Total> expected(int n) {
        Map<String, Total> m = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            int c = i % CUSTOMERS;
            Total t = m.getOrDefault(customer(c), new Total(region(c), 0, 0));
            m.put(customer(c), new Total(t.region(), t.count() + 1, t.sum() + amount(i)));
        }
        return m;
    }
}
