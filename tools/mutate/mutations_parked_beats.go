package main

// Deliberate breaks of the KIP-848 heartbeats parked for releases applied
// in the batch that releases their partitions (kafka/group
// consumer_batch.go, consumer_await.go), in a file of their own.

func init() { mutations = append(mutations, parkedBeatMutations...) }

var parkedBeatMutations = []mutation{
	{
		Name:  "consumer-parked-beat-written-alone",
		Rule:  "releases soon to come, in one write: a heartbeat parked for a release is applied in the batch that applies the release and shares its write",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\ttaken := g.takeParkedLocked(apply)\n", New: "\tvar taken []*beat\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerParkedBeatSharesReleaseWrite|TestConsumerReleaseAnswerWaitsForOthersRelease"}},
	},
}
