package main

// Deliberate breaks of the KIP-848 consumer group rules (kafka/group
// the KIP-848 consumer group rules, the durable consumer group state and consumer group state kept across restarts), in a file of their own so that the list in
// mutations.go stays as it is.

func init() { mutations = append(mutations, consumerGroupMutations...) }

var consumerGroupMutations = []mutation{
	{
		Name:  "consumer-uniform-keeps-too-much",
		Rule:  "the uniform assignor moves only what it must: when a member joins only it gains, when one leaves the others lose nothing",
		Edits: []edit{{File: "kafka/group/assign.go", Old: "\t\tquota[m] = lo\n", New: "\t\tquota[m] = lo + 1\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestAssignUniformMovesOnlyWhatItMust"}},
	},
	{
		Name:  "consumer-assign-held-partition",
		Rule:  "revocation before reassignment: a partition is given only when no other member holds it",
		Edits: []edit{{File: "kafka/group/reconcile.go", Old: "if o, held := cs.owners[x]; held && o != m.id {", New: "if o, held := cs.owners[x]; false && held && o != m.id {"}},
		Tests: []testRun{
			{Pkg: "./kafka/group/", Run: "TestConsumerRevokeBeforeAssign|TestConsumerReconcileNeverDoubleOwns"},
		},
	},
	{
		Name:  "consumer-revocation-not-awaited",
		Rule:  "revocation before reassignment: a revoked partition stays its member's until a heartbeat reports it gone",
		Edits: []edit{{File: "kafka/group/reconcile.go", Old: "if owned == nil || ownsAny(owned, m.revoking) {", New: "if false {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerRevokeBeforeAssign"}},
	},
	{
		Name:  "consumer-no-revocation-timeout",
		Rule:  "revocation before reassignment: a member that does not revoke within its rebalance timeout is removed",
		Edits: []edit{{File: "kafka/group/consumer_heartbeat.go", Old: "\tif m.state == memberUnrevoked {\n\t\tg.scheduleRevokeLocked(m)", New: "\tif m.state == memberUnrevoked && false {\n\t\tg.scheduleRevokeLocked(m)"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerRevocationTimeout"}},
	},
	{
		Name:  "consumer-metadata-not-refreshed",
		Rule:  "server-side regex subscriptions: created and deleted topics change the subscription at the next refresh",
		Edits: []edit{{File: "kafka/group/consumer_target.go", Old: "\tif maps.Equal(topics, cs.topics) && (cs.subs == nil || subsEqual(subs, cs.subs)) {", New: "\tif maps.Equal(topics, cs.topics) && (cs.subs == nil || subsEqual(subs, cs.subs)) || true {"}},
		Tests: []testRun{
			{Pkg: "./kafka/group/", Run: "TestConsumerRegexPicksUpNewTopic|TestConsumerTopicDeleted"},
			{Pkg: "./test/", Run: "Test848RegexNewTopic"},
		},
	},
	{
		Name:  "consumer-heartbeat-unsynced",
		Rule:  "durable consumer group state: a heartbeat's change is durable before its answer",
		Edits: []edit{{File: "kafka/group/consumer_heartbeat.go", Old: "\tif !changed {\n", New: "\tif !changed || true {\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerAnswerDurableAcrossCrash"}},
	},
	{
		Name:  "consumer-no-rollback",
		Rule:  "durable consumer group state: a failed write puts the group back to its last durable state",
		Edits: []edit{{File: "kafka/group/consumer_persist.go", Old: "\tg.rollbackConsumerLocked()\n\tif errors.Is", New: "\tif errors.Is"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerStateBoundRollsBack"}},
	},
	{
		Name:  "consumer-state-not-loaded",
		Rule:  "consumer groups restored at restart: after a restart a consumer group has its members at their epochs",
		Edits: []edit{{File: "kafka/group/coordinator.go", Old: "if cg, ok := consumers[pg.ID]; ok {", New: "if cg, ok := consumers[pg.ID]; ok && false {"}},
		Tests: []testRun{
			{Pkg: "./kafka/group/", Run: "TestConsumerRestartKeepsAssignment"},
			{Pkg: "./test/", Run: "Test848MembersSurviveRestart"},
		},
	},
	{
		Name:  "consumer-stale-commit-accepted",
		Rule:  "commits at the member epoch: an offset commit to a consumer group carries the member's current epoch",
		Edits: []edit{{File: "kafka/group/consumer_commit.go", Old: "\t\treturn errUnsupportedVersion\n\t}\n\tif epoch != memberEpoch {", New: "\t\treturn errUnsupportedVersion\n\t}\n\tif false && epoch != memberEpoch {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerCommitEpochs"}},
	},
	{
		Name: "consumer-state-unsynced",
		Rule: "the durable consumer group state: a consumer group's state is synced before PutConsumerGroup returns",
		Edits: []edit{
			{File: "offsets/consumer.go", Old: "import (\n", New: "import (\n\t\"github.com/cockroachdb/pebble/v2\"\n"},
			{File: "offsets/consumer.go", Old: "\tif err := s.apply(b); err != nil {\n\t\treturn fmt.Errorf(\"offsets: put consumer group", New: "\tif err := b.Commit(pebble.NoSync); err != nil {\n\t\treturn fmt.Errorf(\"offsets: put consumer group"},
		},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestConsumerGroupDurableAcrossCrash"}},
	},
}
