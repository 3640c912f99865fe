package main

// Deliberate breaks of the commit interval's pacing with a Replicator
// (storage I13): prompt entries and pipelined groups with none in flight
// start at once, a group beside one in flight waits.

func init() { mutations = append(mutations, clusterPacingMutations...) }

var clusterPacingMutations = []mutation{
	{
		Name:  "pacing-ignores-prompt",
		Rule:  "storage I13: a prompt entry (a transaction marker) does not wait out the commit interval",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif prompts > 0 {\n", New: "\tif prompts > 0 && false {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPromptStartsAtOnce|TestCommitIntervalPromptStartsAtOnce"}},
	},
	{
		Name:  "pacing-waits-when-idle",
		Rule:  "storage I13, pipelined: a group commit with no group in flight starts at once",
		Edits: []edit{{File: "storage/commit.go", Old: "\treturn c.pipe == nil || len(c.slots) > 1\n", New: "\treturn true\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedIdleStartsAtOnce"}},
	},
	{
		Name:  "pacing-none-in-flight",
		Rule:  "storage I13, pipelined: a group commit beside one in flight waits for the interval, so what is written meanwhile shares it",
		Edits: []edit{{File: "storage/commit.go", Old: "\treturn c.pipe == nil || len(c.slots) > 1\n", New: "\treturn c.pipe == nil\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPacedWhileInFlight"}},
	},
	{
		Name:  "pacing-finish-no-kick",
		Rule:  "storage I13, pipelined: once the groups in flight finish, the next group starts without waiting out the interval",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tsignal(c.kick) // maybe none in flight now", New: "\t\t// maybe none in flight now"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPacedWhileInFlight"}},
	},
	{
		Name:  "marker-not-prompt",
		Rule:  "storage I13: a transaction marker's group commit does not wait out the commit interval",
		Edits: []edit{{File: "resolver/txn.go", Old: "binary.BigEndian.Uint32(b[crcOff:]), Prompt: true})", New: "binary.BigEndian.Uint32(b[crcOff:]), Prompt: false})"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestMarkerIsPrompt"}},
	},
}
