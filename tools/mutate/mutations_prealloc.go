package main

// Deliberate breaks of the segment blocks allocated ahead of the writes
// (storage prealloc.go), in a file of their own.

func init() { mutations = append(mutations, preallocMutations...) }

var preallocMutations = []mutation{
	{
		Name:  "segment-alloc-tail-kept-at-roll",
		Rule:  "segment blocks allocated ahead: a sealed ledger's blocks past its size are freed at Roll",
		Edits: []edit{{File: "storage/append.go", Old: "\tl.freeAllocated()\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSegmentBlocksAllocatedAhead"}},
	},
	{
		Name:  "segment-alloc-tail-kept-at-close",
		Rule:  "segment blocks allocated ahead: the open ledger's blocks past its size are freed when the store closes",
		Edits: []edit{{File: "storage/store.go", Old: "\t\tl.freeAllocated()\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSegmentBlocksAllocatedAhead"}},
	},
	{
		Name:  "segment-alloc-unbounded",
		Rule:  "segment blocks allocated ahead: at most allocAheadMax past the last entry",
		Edits: []edit{{File: "storage/prealloc.go", Old: "\tto := end + min(max(l.w.pos, allocAheadMin), allocAheadMax)\n", New: "\tto := end + max(l.w.pos, allocAheadMin)\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSegmentBlocksAllocatedAhead"}},
	},
	{
		Name:  "segment-alloc-failure-fails-write",
		Rule:  "segment blocks allocated ahead: a failed allocation never fails the write",
		Edits: []edit{{File: "storage/prealloc.go", Old: "\t\t\ts.noAlloc.Store(true)\n\t\t}\n\t\treturn\n", New: "\t\t\ts.noAlloc.Store(true)\n\t\t}\n\t\tpanic(err)\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestAllocAheadFailureKeepsWrites"}},
	},
	{
		Name:  "segment-alloc-nothing-ahead",
		Rule:  "segment blocks allocated ahead: the open ledger's file holds blocks past its last entry",
		Edits: []edit{{File: "storage/prealloc.go", Old: "\ta, ok := l.w.file.(fsys.Allocator)\n", New: "\ta, ok := l.w.file.(fsys.Allocator)\n\tok = ok && false\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSegmentBlocksAllocatedAhead"}},
	},
	{
		Name:  "segment-alloc-over-spare",
		Rule:  "segment blocks allocated ahead: nothing is allocated while a ledger's writes go over its spare's blocks (I8)",
		Edits: []edit{{File: "storage/prealloc.go", Old: "\t\tl.w.alloc = size\n", New: "\t\t_ = size\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSpareNotAllocatedAhead"}},
	},
}
