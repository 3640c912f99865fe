package main

// Deliberate breaks of the group commit's bulk lane (storage/doc.go "Bulk
// lane": one tenant's burst does not hold other logs' small writes behind
// its fdatasync) and of burst steps (storage/doc.go "Burst steps"), in a
// file of their own.

func init() { mutations = append(mutations, fairnessMutations...) }

var fairnessMutations = []mutation{
	{
		Name:  "bulk-lane-off",
		Rule:  "bulk lane: a small write is neither taken into another log's burst's group commit nor queued behind it",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif c.bulkBytes == 0 {\n\t\treturn false\n\t}\n", New: "\treturn false\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneSmallWriteNotBehindBurst"}},
	},
	{
		Name:  "lane-passes-other-lane",
		Rule:  "bulk lane: an entry whose log's earlier entry is unanswered in the other lane is not taken before it (a log's entries are acknowledged in offset order)",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tif held[p.log] || (p.after != nil && !p.after.answered) {\n", New: "\t\tif held[p.log] {\n"}},
		Tests: []testRun{
			{Pkg: "./storage/", Run: "TestBulkLaneKeepsLogOrder"},
			{Pkg: "./storage/", Run: "TestBulkLaneSmallAfterBurstWaits"},
		},
	},
	{
		Name:  "lane-passes-held-entry",
		Rule:  "bulk lane: a log's later entries in a lane are not taken before its earlier entry held back in that lane",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tif held[p.log] || (p.after != nil && !p.after.answered) {\n", New: "\t\tif p.after != nil && !p.after.answered {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneSmallAfterBurstWaits"}},
	},
	{
		Name:  "burst-steps-off",
		Rule:  "burst steps: a large entry written while other logs write in the main lane is written a step at a time, each step synced before the next",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif c.stepBytes == 0 || n <= c.stepBytes || c.mainQueued.Load() == l.lane.seen {\n", New: "\tif true {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBurstWrittenInSteps"}},
	},
	{
		Name:  "burst-steps-unsynced",
		Rule:  "burst steps: each step but the last is synced before the next is written",
		Edits: []edit{{File: "storage/append.go", Old: "\t\tif done += n; err == nil && done < len(payload) && step > 0 {\n", New: "\t\tif done += n; err == nil && done < len(payload) && step < 0 {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBurstWrittenInSteps"}},
	},
	{
		Name:  "burst-steps-always",
		Rule:  "burst steps: a log written alone writes its large entries in one go",
		Edits: []edit{{File: "storage/commit.go", Old: "c.mainQueued.Load() == l.lane.seen {\n", New: "false {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBurstWrittenInSteps"}},
	},
	{
		Name:  "bulk-lane-by-last-entry",
		Rule:  "bulk lane: a log's lane follows its average entry size, so a bulk producer's smaller batch stays in the bulk lane",
		Edits: []edit{{File: "storage/commit.go", Old: "\tln.avg += (int64(p.hdr.Size) - ln.avg) / 4\n", New: "\tln.avg = int64(p.hdr.Size)\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneByAverageSize"}},
	},
}
