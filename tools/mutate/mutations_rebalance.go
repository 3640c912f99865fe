package main

// Deliberate breaks of the classic group's assignment store
// (kafka/group assign_store.go), in a file of their own.

func init() { mutations = append(mutations, classicAssignMutations...) }

var classicAssignMutations = []mutation{
	{
		Name: "classic-assignment-written-under-lock",
		Rule: "the leader's assignment is stored as Kafka stores it: the group stays CompletingRebalance, its lock free, while the synced write runs, so a join meanwhile rebalances at once",
		Edits: []edit{{File: "kafka/group/assign_store.go", Old: "\tg.assigns.Add(1)\n\tgo g.storeAssign(w)\n",
			New: "\tg.assigns.Add(1)\n\terr := g.c.store.PutClassicGroup(w.rec, g.c.cfg.MaxGroupStateBytes)\n\tg.writes.Unlock()\n\tg.assigns.Done()\n\tg.finishAssignLocked(w, err)\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestJoinDuringAssignmentWriteRebalancesAtOnce"}},
	},
	{
		Name:  "classic-overtaken-assignment-applied",
		Rule:  "the leader's assignment is stored as Kafka stores it: a write overtaken by a rebalance does not make the next generation Stable with its assignment",
		Edits: []edit{{File: "kafka/group/assign_store.go", Old: "g.mu.assigning != w.seq || ", New: ""}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestJoinDuringAssignmentWriteRebalancesAtOnce"}},
	},
}
