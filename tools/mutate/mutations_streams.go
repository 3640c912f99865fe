package main

// Deliberate breaks of the streams group rules (KIP-1071: kafka/streams,
// kafka/group streams.go, the offsets store's streams group state), in a file of their own.

func init() { mutations = append(mutations, streamsMutations...) }

var streamsMutations = []mutation{
	{
		Name:  "streams-active-task-given-while-held",
		Rule:  "streams: an active task is given to a member only when no other member owns it (revoked before reassigned)",
		Edits: []edit{{File: "kafka/streams/reconcile.go", Old: "\t\tif m.Assigned.Active.has(t) || !g.heldActive(m, t) {", New: "\t\tif true {"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestGroupReconciliation"}},
	},
	{
		Name:  "streams-refused-static-return-kept",
		Rule:  "streams: a refused heartbeat leaves the group as it was (a static member's refused return does not replace the member that left)",
		Edits: []edit{{File: "kafka/streams/heartbeat.go", Old: "\tcase a.replaced != nil:", New: "\tcase false:"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestRefusedHeartbeatChangesNothing"}},
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
	{
		Name:  "streams-description-from-non-member",
		Rule:  "streams, topology descriptions (KIP-1331): only a member of the group pushes its description (UNKNOWN_MEMBER_ID)",
		Edits: []edit{{File: "kafka/streams/description.go", Old: "\tif g.Members[req.MemberID] == nil {", New: "\tif false {"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestDescriptionStoredPerEpoch"}},
	},
	{
		Name:  "streams-description-asked-of-every-member",
		Rule:  "streams, topology descriptions (KIP-1331): one member at a time is asked for the description",
		Edits: []edit{{File: "kafka/streams/description.go", Old: " || now.Before(g.askedUntil) {", New: " {"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestDescriptionAskedWhileMissing"}},
	},
	{
		Name:  "streams-description-of-another-epoch-served",
		Rule:  "streams, topology descriptions (KIP-1331): a description is served only while it describes the group's topology epoch",
		Edits: []edit{{File: "kafka/streams/description.go", Old: "g.Topology == nil || g.Description == nil || g.Description.Epoch != g.Topology.Epoch {", New: "g.Topology == nil || g.Description == nil {"}},
		Tests: []testRun{{Pkg: "./kafka/streams/", Run: "TestDescriptionStoredPerEpoch"}},
	},
	{
		Name:  "streams-description-unbounded-per-principal",
		Rule:  "group, topology descriptions (KIP-1331): one principal's descriptions over all streams groups are bounded",
		Edits: []edit{{File: "kafka/group/streams.go", Old: "\tif others+len(wire) > max {", New: "\tif others+len(wire) > max+1<<40 {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestStreamsDescriptionBoundPerPrincipal"}},
	},
}
