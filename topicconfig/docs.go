package topicconfig

// Documentation is what DescribeConfigs v3+ answers as a config's
// documentation: with include_documentation, the one-line description of
// docs below (kgateway's own words), nil for a name without one; without
// it, nil. A broker logger (KIP-412) has the empty string either way, as
// in Kafka.
func Documentation(name string, brokerLogger, asked bool) *string {
	if brokerLogger {
		empty := ""
		return &empty
	}
	if d, ok := docs[name]; ok && asked {
		return &d
	}
	return nil
}

// docs describes every config DescribeConfigs describes: topic configs
// (table), broker configs (resolver/broker.go, resolver/dynconfig, the
// wire server's own), group configs (kafka/share, kafka/group) and
// client-metrics configs (kafka/telemetry), keyed by name. A name shared
// by a topic and the broker (compression.type, min.insync.replicas) has
// one description that fits both. A config added to any of those tables
// gets its line here (TestConfigDocumentation checks topic and broker
// configs).
var docs = map[string]string{
	// Topic configs.
	"errors.deadletterqueue.group.enable":     "Whether share groups may use this topic as their dead-letter queue (KIP-1191).",
	"cleanup.policy":                          "How old segments are removed: delete (by retention), compact (latest value per key), or both.",
	"compression.gzip.level":                  "Level gzip recompresses with when compression.type is gzip (-1: the codec's default, or 1-9).",
	"compression.lz4.level":                   "Level lz4 recompresses with when compression.type is lz4 (1-17).",
	"compression.zstd.level":                  "Level zstd recompresses with when compression.type is zstd (-131072 to 22).",
	"compression.type":                        "Codec data is stored with; producer keeps each batch as the producer compressed it.",
	"delete.retention.ms":                     "How long a compacted topic keeps delete markers (tombstones) readable.",
	"file.delete.delay.ms":                    "Delay before a deleted segment's files are removed from disk.",
	"flush.messages":                          "Records appended between forced flushes to disk.",
	"flush.ms":                                "Longest time appended data may wait before a forced flush to disk.",
	"index.interval.bytes":                    "Bytes of records between two entries of the offset index.",
	"max.compaction.lag.ms":                   "Longest a record may stay uncompacted in a compacted topic.",
	"max.decompressed.message.bytes":          "Largest record a compressed batch may decompress to; a larger one fails its batch.",
	"max.message.bytes":                       "Largest record batch the topic accepts (after compression).",
	"message.timestamp.after.max.ms":          "How far in the future a record's CreateTime may be before it is refused.",
	"message.timestamp.before.max.ms":         "How far in the past a record's CreateTime may be before it is refused.",
	"message.timestamp.type":                  "Which time a record carries: the producer's CreateTime or the broker's LogAppendTime.",
	"min.cleanable.dirty.ratio":               "Share of a compacted log that must be uncompacted before it is cleaned.",
	"min.compaction.lag.ms":                   "Shortest a record stays uncompacted in a compacted topic.",
	"min.insync.replicas":                     "Replicas that must have a write before acks=all succeeds.",
	"preallocate":                             "Whether segment files are preallocated on disk when created.",
	"retention.bytes":                         "Largest size a partition keeps before deleting its oldest segments (-1: no limit).",
	"retention.ms":                            "How long records are kept before their segment is deleted (-1: forever).",
	"segment.bytes":                           "Size at which a partition's active segment is closed and a new one begun.",
	"segment.index.bytes":                     "Size of a segment's offset index.",
	"segment.jitter.ms":                       "Random amount subtracted from segment.ms so segments do not all roll at once.",
	"segment.ms":                              "Age at which a partition's active segment is closed and a new one begun.",
	"unclean.leader.election.enable":          "Whether a replica that is not in sync may become leader (possible data loss).",
	"local.retention.bytes":                   "Bytes kept on local disk once older data is in the object tier (-2: retention.bytes).",
	"local.retention.ms":                      "How long data stays on local disk once it is in the object tier (-2: retention.ms).",
	"remote.storage.enable":                   "Whether the topic's sealed segments are copied to the object tier.",
	"follower.replication.throttled.replicas": "Replicas whose follower-side replication is throttled.",
	"leader.replication.throttled.replicas":   "Replicas whose leader-side replication is throttled.",
	CompactedView:                             "Whether fetches of this topic may read its compacted view (kgateway's own).",

	// Broker configs.
	"auto.create.topics.enable":             "Whether a topic is created when a client first produces to or asks for it.",
	"broker.id":                             "This broker's id (the same as node.id).",
	"node.id":                               "This node's id in the cluster.",
	"socket.request.max.bytes":              "Largest request frame the broker reads; larger ones close the connection.",
	"log.cleanup.policy":                    "Default cleanup.policy of topics.",
	"log.cleaner.backoff.ms":                "Pause of the log cleaner when there is nothing to clean.",
	"log.cleaner.dedupe.buffer.size":        "Memory the log cleaner uses to find the latest offset of each key.",
	"log.cleaner.delete.retention.ms":       "Default delete.retention.ms of topics.",
	"log.cleaner.enable":                    "Whether the log cleaner runs (compacted topics need it).",
	"log.cleaner.io.max.bytes.per.second":   "Read and write rate the log cleaner is held to.",
	"log.cleaner.max.compaction.lag.ms":     "Default max.compaction.lag.ms of topics.",
	"log.cleaner.min.cleanable.ratio":       "Default min.cleanable.dirty.ratio of topics.",
	"log.cleaner.min.compaction.lag.ms":     "Default min.compaction.lag.ms of topics.",
	"log.cleaner.threads":                   "Number of log cleaner threads.",
	"log.local.retention.bytes":             "Default local.retention.bytes of topics.",
	"log.local.retention.ms":                "Default local.retention.ms of topics.",
	"remote.log.storage.system.enable":      "Whether the broker has an object tier to copy sealed segments to.",
	"remote.log.manager.task.interval.ms":   "Interval between passes that copy segments to the object tier.",
	"log.message.timestamp.type":            "Default message.timestamp.type of topics.",
	"log.retention.bytes":                   "Default retention.bytes of topics.",
	"log.retention.check.interval.ms":       "Interval between checks for segments past their retention.",
	"log.retention.ms":                      "Default retention.ms of topics (-1: forever).",
	"log.roll.ms":                           "Default segment.ms of topics.",
	"log.segment.bytes":                     "Default segment.bytes of topics.",
	"message.max.bytes":                     "Default max.message.bytes of topics.",
	"num.partitions":                        "Partitions of a topic created without a partition count.",
	"default.replication.factor":            "Replication factor of a topic created without one.",
	"offsets.retention.minutes":             "How long committed offsets of an empty group are kept.",
	"transaction.max.timeout.ms":            "Largest transaction timeout a producer may ask for.",
	"group.min.session.timeout.ms":          "Smallest session timeout a classic group member may ask for.",
	"group.max.session.timeout.ms":          "Largest session timeout a classic group member may ask for.",
	"group.consumer.session.timeout.ms":     "Default session timeout of consumer group (KIP-848) members.",
	"group.consumer.min.session.timeout.ms": "Smallest session timeout a consumer group (KIP-848) may be configured with.",
	"group.consumer.max.session.timeout.ms": "Largest session timeout a consumer group (KIP-848) may be configured with.",
	"group.share.session.timeout.ms":        "Default session timeout of share group members.",

	// Group configs.
	"consumer.session.timeout.ms":               "Session timeout of this consumer group's (KIP-848) members.",
	"consumer.heartbeat.interval.ms":            "Heartbeat interval this consumer group's (KIP-848) members are told to use.",
	"share.auto.offset.reset":                   "Where a share group starts reading a partition it has no state for: latest or earliest.",
	"share.record.lock.duration.ms":             "How long a share consumer holds the records it was given before they may be redelivered.",
	"share.session.timeout.ms":                  "Session timeout of this share group's members.",
	"share.heartbeat.interval.ms":               "Heartbeat interval of this share group's members.",
	"errors.deadletterqueue.topic.name":         "This share group's dead-letter queue topic: rejected records and those out of deliveries are copied there (blank: none).",
	"errors.deadletterqueue.copy.record.enable": "Whether this share group's dead-letter records copy the original key and value, or carry the context headers only.",
	"share.isolation.level":                     "Whether this share group reads uncommitted or only committed transactional records.",

	// Client-metrics configs (KIP-714).
	"metrics":     "Metric name prefixes the matched clients push (* for all).",
	"interval.ms": "How often the matched clients push their metrics.",
	"match":       "Selectors (name=regex) a client must all match to get this subscription.",
}
