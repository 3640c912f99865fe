// Package kafkatools runs Apache Kafka's own command-line tools (Kafka
// 4.4.0, from the jars of apachekafka.Classpath()) against kgateway and
// against a real Apache Kafka broker, and requires that they print the
// same.
//
// TestTools starts the kgateway binary (test/kgbin) and a single-node
// Apache Kafka broker (test/apachekafka), both with the built-in
// authorizer and User:ANONYMOUS a super user, and runs a scenario of tool
// invocations — kafka-topics, kafka-configs, kafka-consumer-groups,
// kafka-acls, kafka-transactions, kafka-share-groups,
// kafka-console-share-consumer, kafka-log-dirs, kafka-features,
// kafka-leader-election, kafka-reassign-partitions, kafka-producer-perf-test and
// kafka-consumer-perf-test — each step against both brokers at once. A
// tool runs as its bin/*.sh script runs it: `java -cp <classpath>
// <MainClass> args...`, with a small heap and a class-data-sharing archive
// built by the first run (startup only). Client-side setup that no tool
// does (a consumer group member, an open transaction) uses franz-go.
//
// Each step's exit status, stdout and stderr are normalised (addresses,
// ids, UUIDs, times, perf figures, column padding, stack frames) and
// compared line by line; a line printed by one broker and not the other
// fails the test unless acceptedDifferences lists it with its reason, and
// an entry that no longer matches anything fails too, so the list only
// shrinks. KGW_TOOLS_DUMP=dir writes every raw output there.
//
// It takes minutes (two JVMs per step), so it runs only with
// KGW_KAFKA_TOOLS=1: `make test-kafka-tools`, which .ci/run calls.
package kafkatools
