package main

// Deliberate breaks of the streams group rules (KIP-1071: kafka/streams,
// kafka/group streams.go, the offsets store's streams group state), in a file of their own.

func init() { mutations = append(mutations, streamsMutations...) }

var streamsMutations = []mutation{
	{
		Name:  "streams-active-task-given-while-held",
		Rule:  "streams: an active task is given to a member only when no other member owns it (revoked before reassigned)",
		Edits: []edit{{File: "kafka/streams/group.go", Old: "\t\tif m.Assigned.Active.has(t) || !g.heldActive(m, t) {", New: "\t\tif true {"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestGroupReconciliation"}},
	},
	{
		Name:  "streams-unbalanced-active-tasks",
		Rule:  "streams: active tasks are balanced across members",
		Edits: []edit{{File: "kafka/streams/assign.go", Old: "\treturn a.load[i] < a.floor || (a.load[i] == a.floor && a.extra > 0)", New: "\treturn true"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestAssignBalanced"}},
	},
	{
		Name:  "streams-state-not-loaded",
		Rule:  "group, streams groups: after a restart members go on at their epochs with their tasks",
		Edits: []edit{{File: "kafka/group/coordinator.go", Old: "\t\tif sg, ok := streamGroups[pg.ID]; ok {", New: "\t\tif sg, ok := streamGroups[pg.ID]; ok && false {"}},
		Tests: []testRun{{Pkg: "./test/", Run: "TestStreamsSurvivesRestart"}},
	},
}
