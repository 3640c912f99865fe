package main

// Deliberate breaks of the consumer-group online migration (kafka/group
// migrate.go), of share groups' read_committed (read-committed share
// groups) and of Produce's refusal of a producer's LogAppendTime batch.

func init() { mutations = append(mutations, protocolGapMutations...) }

var protocolGapMutations = []mutation{
	{
		Name:  "producer-log-append-time-accepted",
		Rule:  "only a broker stamps LogAppendTime: a producer's batch with that timestamp type is INVALID_TIMESTAMP on a LogAppendTime topic",
		Edits: []edit{{File: "topicconfig/records.go", Old: "\trefuseStamped := stamped && !r.CreateTime", New: "\trefuseStamped := stamped && false"}},
		Tests: []testRun{
			{Pkg: "./topicconfig/", Run: "TestRecordRules"},
			{Pkg: "./test/", Run: "TestProduceProducerLogAppendTime"},
		},
	},
	{
		Name:  "producer-log-append-time-stored",
		Rule:  "only a broker stamps LogAppendTime: a producer's batch with that timestamp type is stored as CreateTime on a CreateTime topic",
		Edits: []edit{{File: "resolver/produce.go", Old: "\t\t\tsetCreateTime(batches[i])", New: "\t\t\t_ = batches[i]"}},
		Tests: []testRun{{Pkg: "./test/", Run: "TestProduceProducerLogAppendTime"}},
	},
	{
		Name:  "producer-log-append-time-checked-per-record",
		Rule:  "a producer's LogAppendTime batch on a CreateTime topic is checked at its max timestamp",
		Edits: []edit{{File: "topicconfig/records.go", Old: "\t\tif stamped {\n\t\t\tts = maxTS", New: "\t\tif false {\n\t\t\tts = maxTS"}},
		Tests: []testRun{{Pkg: "./topicconfig/", Run: "TestRecordRules"}},
	},
	{
		Name:  "migration-no-online-upgrade",
		Rule:  "one group type per id: a consumer-protocol join converts a classic group with members online",
		Edits: []edit{{File: "kafka/group/consumer_heartbeat.go", Old: "if join && g.mu.typ == typeClassic && len(g.mu.members) > 0 {", New: "if false && join && g.mu.typ == typeClassic && len(g.mu.members) > 0 {"}},
		Tests: []testRun{
			{Pkg: "./kafka/group/", Run: "TestMigrationUpgradeServeDowngrade"},
			{Pkg: "./test/", Run: "TestGroupMigrationClassicConsumerClassic"},
		},
	},
	{
		Name:  "migration-no-downgrade",
		Rule:  "one group type per id: the group is classic again when its last consumer-protocol member leaves",
		Edits: []edit{{File: "kafka/group/migrate.go", Old: "\tif m.classic != nil || len(cs.members) <= 1 ||", New: "\tif true || m.classic != nil || len(cs.members) <= 1 ||"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestMigrationUpgradeServeDowngrade"}},
	},
	{
		Name:  "migration-classic-member-not-told-to-rejoin",
		Rule:  "revocation before reassignment for classic members: a Heartbeat answers REBALANCE_IN_PROGRESS while the member is behind",
		Edits: []edit{{File: "kafka/group/migrate.go", Old: "\tif m.epoch < cs.epoch || m.state == memberUnrevoked {", New: "\tif false {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestMigrationUpgradeServeDowngrade"}},
	},
	{
		Name:  "share-read-committed-delivers-aborted",
		Rule:  "read-committed share groups: read_committed never acquires an aborted transaction's records",
		Edits: []edit{{File: "kafka/share/partition.go", Old: "case sp.control, sp.aborted:", New: "case sp.control:"}},
		Tests: []testRun{
			{Pkg: "./kafka/share/", Run: "TestPartitionReadCommittedSkipsAborted"},
			{Pkg: "./test/", Run: "TestShareGroupReadCommitted"},
		},
	},
}
