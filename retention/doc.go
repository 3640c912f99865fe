// Package retention is what leaves a partition's local log and when: the
// retention pass (retention.go, resolver/doc.go "Retention", the retention rules) turns
// retention.ms and retention.bytes into a trim boundary, and the tier
// pass (tiering.go) uploads sealed ledgers of topics with
// remote.storage.enable=true to the object tier and lets local copies
// go as local.retention.* allows.
//
// It owns: the two background loops, the boundary arithmetic (expired
// entries, sealed ledgers, the size bound) and the order of a pass.
//
// It may not touch: the catalog, configs or producer and transaction
// state, except through the Partition and Host interfaces (host.go) the
// resolver implements; it moves a log start only through
// Partition.TrimTo, which checkpoints first (transaction recovery). DeleteRecords, a Kafka
// API, stays the resolver's. It imports neither resolver nor kafka/.
package retention
