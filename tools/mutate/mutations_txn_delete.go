package main

// Deliberate breaks of a deletion dropping pending transactional offsets
// (offsets/store.go, the package doc's deletion paragraph), in a file of
// their own.

func init() { mutations = append(mutations, txnDeleteMutations...) }

var txnDeleteMutations = []mutation{
	{
		Name: "offsets-delete-group-keeps-pending",
		Rule: "offsets O5: DeleteGroup drops every transaction's pending offsets in the group, so a later commit does not bring it back",
		Edits: []edit{{File: "offsets/store.go",
			Old: "range [][]byte{groupOffsetPrefix(group), pendingGroupPrefix(group)} {",
			New: "range [][]byte{groupOffsetPrefix(group)} {"}},
		Tests: []testRun{
			{Pkg: "./offsets/", Run: "TestDeleteGroupDropsPending|TestDeletionDropsPendingAcrossCrash"},
			{Pkg: "./test/", Run: "TestTxnCommitAfterGroupDeletion"},
		},
	},
	{
		Name: "offsets-delete-offsets-keeps-pending",
		Rule: "offsets O5: DeleteOffsets drops every transaction's pending offsets of its partitions, as Kafka's OffsetDelete tombstone",
		Edits: []edit{{File: "offsets/store.go",
			Old: "\tif err := s.deletePendingLocked(b, group, tps); err != nil {\n",
			New: "\tif err := error(nil); err != nil {\n"}},
		Tests: []testRun{
			{Pkg: "./offsets/", Run: "TestDeleteOffsetsDropsPending|TestDeletionDropsPendingAcrossCrash"},
			{Pkg: "./test/", Run: "TestTxnCommitAfterGroupDeletion"},
		},
	},
	{
		Name: "offsets-delete-offsets-drops-all-pending",
		Rule: "offsets O5: DeleteOffsets drops the pending offsets of its partitions only",
		Edits: []edit{{File: "offsets/store.go",
			Old: "if err != nil || !doomed[tp] {",
			New: "if err != nil || doomed[tp] && false {"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestDeleteOffsetsDropsPending"}},
	},
}
