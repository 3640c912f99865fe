package kafkatools

// acceptedDifferences are the differences between what the tools print for
// kgateway and for Apache Kafka that are known and explained. A difference
// not listed fails TestTools, and so does an entry that no longer matches
// anything: the list only shrinks. Step and Line are regular expressions
// (matching the whole step name and normalised line).
var acceptedDifferences = []accepted{
	// Internal topics.
	{Step: `topics list`, Side: "kgateway", Line: `__consumer_offsets|__transaction_state`,
		Reason: "kgateway's internal topics exist from its first start; Kafka creates them on first use " +
			"(this listing comes before any group or transaction)"},

	// kafka-topics --describe.
	{Step: `topics describe( altered)?`, Side: "kafka", Line: `Topic: orders TopicId: \{topic-id\} PartitionCount: [35] ReplicationFactor: 1 Configs: min.insync.replicas=1,segment.bytes=1073741824`,
		Reason: "kafka-topics prints every config not at its default: Kafka's broker sets log.segment.bytes in " +
			"server.properties (as Kafka's shipped config does) and its controller sets min.insync.replicas=1 " +
			"as a cluster-wide dynamic default; kgateway runs on defaults"},
	{Step: `topics describe( altered)?`, Side: "kgateway", Line: `Topic: orders TopicId: \{topic-id\} PartitionCount: [35] ReplicationFactor: 1 Configs:`,
		Reason: "the other side of the line above (no non-default broker configs)"},
	{Step: `topics describe with config`, Side: "kafka", Line: `Topic: events TopicId: \{topic-id\} PartitionCount: 2 ReplicationFactor: 1 Configs: min.insync.replicas=1,cleanup.policy=compact,segment.bytes=1073741824,retention.ms=3600000`,
		Reason: "as above: Kafka's static log.segment.bytes and dynamic min.insync.replicas are listed beside the topic's own configs"},
	{Step: `topics describe with config`, Side: "kgateway", Line: `Topic: events TopicId: \{topic-id\} PartitionCount: 2 ReplicationFactor: 1 Configs: cleanup.policy=compact,retention.ms=3600000`,
		Reason: "the other side of the line above"},

	// kafka-features describe.
	{Step: `features describe`, Side: "kafka", Line: `Feature: (eligible\.leader\.replicas|group|kraft|metadata|streams)\.version .*`,
		Reason: "features kgateway does not have: no KRaft metadata log or quorum (metadata.version, kraft.version), " +
			"one replica per partition (eligible.leader.replicas.version), KIP-848 groups served without group.version, " +
			"no Streams groups (streams.version)"},

	// kafka-configs, topics.
	{Step: `configs topic describe.*`, Side: "kafka", Line: `retention.ms=86400000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention.ms=86400000\}`,
		Reason: "Kafka lists a topic config's broker synonyms only from the primary name on (log.retention.ms), " +
			"and log.retention.ms has no default of its own (log.retention.hours=168 carries it), so none is listed"},
	{Step: `configs topic describe.*`, Side: "kgateway", Line: `retention.ms=86400000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention.ms=86400000, DEFAULT_CONFIG:log.retention.ms=604800000\}`,
		Reason: "kgateway reports log.retention.ms with its effective default as the DEFAULT_CONFIG synonym (resolver/configs.go)"},

	// kafka-configs, brokers.
	{Step: `configs broker default describe( after alter)?`, Side: "kafka", Line: `min.insync.replicas=1 sensitive=false synonyms=\{DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1\}`,
		Reason: "Kafka's controller sets min.insync.replicas=1 as a cluster-wide dynamic default (for eligible leader replicas); " +
			"kgateway sets no dynamic cluster default of its own"},
	{Step: `configs broker describe after alter`, Side: "kafka", Line: `log\.cleaner\.threads=2 sensitive=false synonyms=\{DYNAMIC_BROKER_CONFIG:log\.cleaner\.threads=2, DEFAULT_CONFIG:log\.cleaner\.threads=1\}`,
		Reason: "the log.cleaner.threads=2 the step before set on Kafka, which kgateway refuses (read-only there)"},
	{Step: `configs broker describe after alter`, Side: "kafka", Line: `log\.segment\.bytes=536870912 sensitive=false synonyms=\{DYNAMIC_BROKER_CONFIG:log\.segment\.bytes=536870912, STATIC_BROKER_CONFIG:log\.segment\.bytes=1073741824, DEFAULT_CONFIG:log\.segment\.bytes=1073741824\}`,
		Reason: "the Kafka under test runs Kafka's shipped server.properties, which sets log.segment.bytes (a STATIC_BROKER_CONFIG synonym); kgateway runs on defaults"},
	{Step: `configs broker describe after alter`, Side: "kgateway", Line: `log\.segment\.bytes=536870912 sensitive=false synonyms=\{DYNAMIC_BROKER_CONFIG:log\.segment\.bytes=536870912, DEFAULT_CONFIG:log\.segment\.bytes=1073741824\}`,
		Reason: "the other side of the line above"},
	{Step: `configs broker alter`, Side: "kafka", Line: `exit 0|Completed updating config for broker 1\.`,
		Reason: "log.cleaner.threads is dynamic in Kafka (its LogCleaner reconfigures); kgateway's cleaner threads are set at start, so it is read-only there (resolver/dynconfig)"},
	{Step: `configs broker alter`, Side: "kgateway", Line: `exit 1|stderr: Error while executing config command with args .*|stderr: (java.util.concurrent.ExecutionException|Caused by): org.apache.kafka.common.errors.InvalidRequestException: Cannot update these configs dynamically: \[log\.cleaner\.threads\]`,
		Reason: "the other side of the line above"},

	// kafka-configs, broker loggers: both sides list their own loggers
	// (both have root and kafka, at INFO).
	{Step: `configs broker-loggers describe`, Side: "kafka", Line: `(LogFutureTimestampLogger|com\..+|kafka\..+|org\..+|state\..+)=[A-Z]+ sensitive=false synonyms=\{\}`,
		Reason: "Kafka's log4j loggers, named for its classes"},
	{Step: `configs broker-loggers describe`, Side: "kgateway", Line: `(kafka\.(group|share|txn)|offsets|resolver|storage|tier)=[A-Z]+ sensitive=false synonyms=\{\}`,
		Reason: "kgateway's loggers, named for its components (package logging)"},

	// kafka-share-groups --describe: START-OFFSET.
	{Step: `share describe (active|empty)`, Side: "kafka", Line: `workers tasks [01] 0 0`,
		Reason: "Kafka's persisted share-partition start offset (what DescribeShareGroupOffsets reads) stays behind " +
			"the acknowledged records until a later state write; kgateway persists the start offset past them at once; LAG agrees (0)"},
	{Step: `share describe (active|empty)`, Side: "kgateway", Line: `workers tasks [01] 5 0`,
		Reason: "the other side of the line above"},
}
