package main

// Deliberate breaks of the classic generation written once, with the
// leader's assignment (kafka/group join.go), and of the KIP-848 parked
// heartbeats applied in the batch that releases their partitions
// (kafka/group consumer_batch.go), in a file of their own.

func init() { mutations = append(mutations, generationWriteMutations...) }

var generationWriteMutations = []mutation{
	{
		Name: "classic-join-completion-written",
		Rule: "durable classic membership: as in Kafka, a completed join is not written; a generation's record goes with the leader's assignment",
		Edits: []edit{{File: "kafka/group/join.go", Old: "\tg.transitionLocked(stateCompletingRebalance)\n",
			New: "\tg.transitionLocked(stateCompletingRebalance)\n\t_ = g.c.store.PutGroup(g.stateLocked().Group)\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestClassicGenerationWrittenWithAssignment|TestRebalanceStartNotWritten"}},
	},
	{
		Name:  "consumer-parked-beat-written-alone",
		Rule:  "releases soon to come, in one write: a heartbeat parked for a release is applied in the batch that applies the release and shares its write",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\ttaken := g.takeParkedLocked(apply)\n", New: "\tvar taken []*beat\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerParkedBeatSharesReleaseWrite|TestConsumerReleaseAnswerWaitsForOthersRelease"}},
	},
}
