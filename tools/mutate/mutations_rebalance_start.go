package main

// Deliberate breaks of the unwritten start of a classic rebalance and of
// retention going by the group's state in memory (kafka/group join.go,
// coordinator.go), in a file of their own.

func init() { mutations = append(mutations, rebalanceStartMutations...) }

var rebalanceStartMutations = []mutation{
	{
		Name: "classic-rebalance-start-written",
		Rule: "persisted empty groups: as in Kafka, an Empty group's rebalance start is not written (no synced write under the group lock in the first join)",
		Edits: []edit{{File: "kafka/group/join.go", Old: "\tg.transitionLocked(statePreparingRebalance)\n",
			New: "\tg.transitionLocked(statePreparingRebalance)\n\tif wasEmpty {\n\t\tg.persistLocked()\n\t}\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestRebalanceStartNotWritten"}},
	},
	{
		Name:  "retention-ignores-rebalancing-group",
		Rule:  "persisted empty groups: retention goes by the group's state in memory and passes over a group stored Empty that is rebalancing",
		Edits: []edit{{File: "kafka/group/coordinator.go", Old: "\t\treturn g != nil && g.active.Load()\n", New: "\t\treturn false && g != nil\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestRebalanceStartNotWritten"}},
	},
}
