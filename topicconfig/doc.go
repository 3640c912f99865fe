// Package topicconfig is the vocabulary of Kafka's topic configs: the
// names kgateway accepts, their types, Kafka's defaults and the broker
// configs that override them, their validation, IncrementalAlterConfigs'
// operations on a set of them, and the settings a set resolves to.
//
// It owns no state. The resolver keeps each topic's explicit configs (in
// its binding) and the broker's values; it asks this package whether a
// set is valid, what it resolves to, and how DescribeConfigs reports it.
// It may not touch partitions, ledgers or storage: Settings carries a
// ledger.Config and a tier.LocalPolicy as values, nothing more.
//
// Every name Kafka 4.4 defines for topics that a client may reasonably set
// is accepted, validated and stored, so tools that set them keep working
// (the 3.x names Kafka 4.0 removed are unknown, as there); these take
// effect:
//   - max.message.bytes: the largest record batch Produce accepts
//   - message.timestamp.type: LogAppendTime makes Produce stamp batches
//   - compression.type: a codec other than producer recompresses batches,
//     at compression.gzip.level, compression.lz4.level or
//     compression.zstd.level (KIP-390)
//   - message.timestamp.before.max.ms, message.timestamp.after.max.ms
//     (an hour by default since Kafka 4.0): the bounds of a CreateTime
//     record's timestamp around the broker's clock (KIP-937, RecordRules)
//   - max.decompressed.message.bytes: the largest record of a compressed
//     batch (RecordRules)
//   - segment.bytes, segment.ms: the ledger rollover policy
//   - retention.ms, retention.bytes: the retention pass (package retention)
//   - cleanup.policy: delete (retention), compact (package cleaner)
//     or both; compact refuses keyless records
//   - min.cleanable.dirty.ratio, min.compaction.lag.ms,
//     max.compaction.lag.ms, delete.retention.ms: the cleaner
//   - min.insync.replicas: 1 (one replica; a larger value could never be met)
//   - remote.storage.enable, local.retention.*: the object tier
//   - kgateway.compacted.view.enable (not Kafka's): the compacted view of a
//     delete-policy topic and its companion topic
//
// The rest are stored and described but change nothing (one replica, no
// flush policy: every acknowledged append is fsync'd).
//
// A topic config that is not set takes its broker default: the broker
// config the table names (whose values the caller passes as a Broker
// map), else Kafka's static default.
package topicconfig
