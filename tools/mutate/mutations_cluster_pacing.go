package main

// Deliberate breaks of how a pipelined group commit's start is paced
// (storage I13, committer.nextStart), in a file of their own.

func init() { mutations = append(mutations, clusterPacingMutations...) }

var clusterPacingMutations = []mutation{
	{
		Name:  "pacing-idle-full-interval",
		Rule:  "pipelined, with no group in flight, the next group starts twice the latest commit's time after the last start when that is sooner than the interval",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif c.pipe != nil && len(c.slots) == 1 {\n", New: "\tif c.pipe != nil && len(c.slots) == 0 {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedFastCommitsStartSoon"}},
	},
	{
		Name:  "pacing-in-flight-not-paced",
		Rule:  "pipelined, a group that would start beside one in flight waits for the interval or for that group to finish",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif c.pipe != nil && len(c.slots) == 1 {\n", New: "\tif c.pipe != nil {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPacedWhileInFlight"}},
	},
	{
		Name:  "pacing-slow-commit-not-paced",
		Rule:  "pipelined, once the latest commit took half the interval or more, the interval paces the next start",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tgap = min(gap, 2*time.Duration(c.took.Load()))\n", New: "\t\tgap = 0\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedSlowCommitPaced"}},
	},
	{
		Name:  "pacing-finish-no-kick",
		Rule:  "a finished group ends the committer's pause for the interval early, so the next start is paced as with none in flight",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tsignal(c.kick) // maybe none in flight now: the pause may end (I13)\n", New: "\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedPacedWhileInFlight"}},
	},
}
