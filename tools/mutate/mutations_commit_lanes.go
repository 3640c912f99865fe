package main

// Deliberate breaks of the group commit's lane, as reported to
// OnCommit and the group_commit metrics' lane label.

func init() { mutations = append(mutations, commitLaneMutations...) }

var commitLaneMutations = []mutation{
	{
		Name:  "commit-stats-bulk-lane-unreported",
		Rule:  "a group commit's stats name the lane that made it durable: a bulk lane group is reported as bulk",
		Edits: []edit{{File: "storage/commit.go", Old: "Files: len(files), Bulk: group[0].bulk}", New: "Files: len(files)}"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkEntriesNotHeldNorJournaled"}},
	},
	{
		Name:  "commit-stats-journal-lane-as-files",
		Rule:  "a group commit's stats name the lane that made it durable: a journaled group is reported as journal",
		Edits: []edit{{File: "storage/api.go", Old: "\tcase st.Journaled:\n\t\treturn \"journal\"", New: "\tcase st.Journaled && false:\n\t\treturn \"journal\""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkEntriesNotHeldNorJournaled"}},
	},
}
