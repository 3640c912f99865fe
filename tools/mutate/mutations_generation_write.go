package main

// Deliberate breaks of the classic generation written once, with the
// leader's assignment, and of the leader's JoinGroup answered first
// (kafka/group join.go), in a file of their own.

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
		Name:  "classic-leader-answered-in-id-order",
		Rule:  "a completed classic join answers the leader first: the generation waits for its SyncGroup",
		Edits: []edit{{File: "kafka/group/join.go", Old: "\tfor _, m := range g.leaderFirstLocked() {\n", New: "\tfor _, m := range g.sortedMembersLocked() {\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestLeaderJoinAnsweredFirst"}},
	},
}
