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

func init() { mutations = append(mutations, initialJoinMutations...) }

// initialJoinMutations break the first rebalance of an Empty classic
// group (kafka/group join.go, Kafka's InitialDelayedJoin).
var initialJoinMutations = []mutation{
	{
		Name:  "classic-initial-join-waits-for-handed-out-ids",
		Rule:  "rebalance completion: with no initial delay, the first rebalance of an Empty group is not held up by member ids handed out and not back",
		Edits: []edit{{File: "kafka/group/join.go", Old: "\tif wasEmpty {\n\t\t// Kafka's InitialDelayedJoin", New: "\tif wasEmpty && g.c.cfg.InitialRebalanceDelay > 0 {\n\t\t// Kafka's InitialDelayedJoin"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestInitialRebalanceWithoutDelay"}},
	},
	{
		Name: "classic-initial-join-completed-inline",
		Rule: "rebalance completion: with no initial delay, the first rebalance of an Empty group completes once the group's lock is free again, so joins already waiting for it are in the first generation",
		Edits: []edit{{File: "kafka/group/join.go", Old: "\tg.maybeRebalanceLocked()\n\treturn joinResult{}, ch\n}\n\nfunc (g *group) updateAndRebalanceLocked",
			New: "\tg.maybeRebalanceLocked()\n\tif g.mu.initialDelay && g.c.cfg.InitialRebalanceDelay == 0 {\n\t\tg.mu.initialDelay = false\n\t\tg.completeJoinLocked()\n\t}\n\treturn joinResult{}, ch\n}\n\nfunc (g *group) updateAndRebalanceLocked"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestInitialRebalanceWithoutDelay"}},
	},
	{
		Name:  "classic-initial-join-not-extended",
		Rule:  "rebalance completion: the first rebalance of an Empty group waits again while members keep joining (Kafka's InitialDelayedJoin)",
		Edits: []edit{{File: "kafka/group/join.go", Old: "\tif g.mu.newMember && remaining > 0 {", New: "\tif false && g.mu.newMember && remaining > 0 {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestInitialRebalanceDelay"}},
	},
}
