package main

// Deliberate breaks of the KIP-848 new members' joins sharing one target
// per batch (kafka/group consumer_joins.go), in a file of their own.

func init() { mutations = append(mutations, batchJoinMutations...) }

var batchJoinMutations = []mutation{
	{
		Name:  "consumer-batch-joins-target-per-join",
		Rule:  "new members joining in one batch of heartbeats are reconciled against one target computed at the batch's group epoch",
		Edits: []edit{{File: "kafka/group/consumer_joins.go", Old: "\tif r.MemberEpoch != epochJoin || r.InstanceID != nil", New: "\tif true || r.MemberEpoch != epochJoin || r.InstanceID != nil"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBatchJoinsShareOneTarget"}},
	},
}
