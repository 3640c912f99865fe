package main

// Deliberate breaks of prompt entries (storage I13): a transaction
// marker's group commit starts without waiting out the commit interval
// once no group is in flight, and not beside one.

func init() { mutations = append(mutations, markerPromptMutations...) }

var markerPromptMutations = []mutation{
	{
		Name:  "prompt-ignored",
		Rule:  "storage I13: with no group in flight a prompt entry (a transaction marker) does not wait out the commit interval",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif prompts == 0 {\n", New: "\tif prompts >= 0 {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestCommitIntervalPromptStartsAtOnce|TestPipelinedPromptWaitsForInFlight"}},
	},
	{
		Name:  "prompt-beside-in-flight",
		Rule:  "storage I13: a prompt entry beside a group in flight waits for it and shares the next group with what was queued meanwhile",
		Edits: []edit{{File: "storage/commit.go", Old: "\treturn c.pipe != nil && len(c.slots) > 1\n", New: "\treturn false\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPromptWaitsForInFlight"}},
	},
	{
		Name:  "prompt-finish-no-kick",
		Rule:  "storage I13: once the group in flight finishes, a queued prompt entry's group starts without waiting out the interval",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tsignal(c.kick) // maybe none in flight now", New: "\t\t// maybe none in flight now"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPromptWaitsForInFlight"}},
	},
	{
		Name:  "marker-not-prompt",
		Rule:  "storage I13: a transaction marker is written prompt, its group commit not waiting out the commit interval when none is in flight",
		Edits: []edit{{File: "resolver/txn.go", Old: "binary.BigEndian.Uint32(b[crcOff:]), Prompt: true})", New: "binary.BigEndian.Uint32(b[crcOff:]), Prompt: false})"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestMarkerIsPrompt"}},
	},
}
