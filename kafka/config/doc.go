// Package config is the Kafka front end's configuration: the Config a
// kafka.Server is made from, with Kafka's broker config names, its
// defaults (WithDefaults) and its validation (Validate, which reports
// every problem at once), the listeners it serves (Listener, with their
// security protocols), and the interfaces a Config hands in: the view of
// the other nodes in cluster mode (Cluster, Broker, Catalog) and the
// per-request observer (Observer). kafka/ re-exports every name
// (kafka/vocabulary.go), so the layers above say kafka.Config.
//
// It holds no state and runs nothing. It may import the configuration
// types of the pieces a Config configures (auth, resolver, offsets,
// topicconfig, kafka/group, kafka/share, kafka/txn, kafka/quota,
// kafka/telemetry, kafka/tenancy), kafka/wire's frame bounds and the
// logger registry (logging: WithDefaults makes Logger a registry's and
// names the coordinators' loggers); never
// kafka/ itself, a handler's package or the cluster.
package config
