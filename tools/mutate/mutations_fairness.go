package main

// Deliberate breaks of the group commit's bulk lane (storage/doc.go "Bulk
// lane": one tenant's burst does not hold other logs' small writes behind
// its fdatasync), in a file of their own.

func init() { mutations = append(mutations, fairnessMutations...) }

var fairnessMutations = []mutation{
	{
		Name:  "bulk-lane-off",
		Rule:  "bulk lane: a small write is neither taken into another log's burst's group commit nor queued behind it",
		Edits: []edit{{File: "storage/commit.go", Old: "\tif c.bulkBytes == 0 {\n\t\treturn false\n\t}\n", New: "\treturn false\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneSmallWriteNotBehindBurst"}},
	},
	{
		Name:  "bulk-lane-passes-main-lane",
		Rule:  "bulk lane: a log's bulk entries are taken only once its earlier main-lane entries are published (a log's entries are acknowledged in offset order)",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tif p.log.lane.main > 0 {\n", New: "\t\tif false {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneKeepsLogOrder"}},
	},
	{
		Name:  "bulk-lane-entry-behind-burst-in-main",
		Rule:  "bulk lane: an entry written behind its log's unpublished bulk entry is committed after it, in the bulk lane",
		Edits: []edit{{File: "storage/commit.go", Old: "\tp.bulk = ln.avg >= int64(c.bulkBytes) || ln.bulk > 0\n", New: "\tp.bulk = ln.avg >= int64(c.bulkBytes)\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneKeepsLogOrder"}},
	},
	{
		Name:  "bulk-lane-by-last-entry",
		Rule:  "bulk lane: a log's lane follows its average entry size, so a bulk producer's smaller batch stays in the bulk lane",
		Edits: []edit{{File: "storage/commit.go", Old: "\tln.avg += (int64(p.hdr.Size) - ln.avg) / 4\n", New: "\tln.avg = int64(p.hdr.Size)\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkLaneByAverageSize"}},
	},
}
