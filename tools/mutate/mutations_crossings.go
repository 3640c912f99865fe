package main

// Deliberate breaks of "resolve once, parse once, reuse the bounds": a
// fetch or a produce of one partition crosses into the resolver once
// (kafka TestCrossingsPerPartition, resolver TestPartitionResolvedOnce).

func init() { mutations = append(mutations, crossingMutations...) }

var crossingMutations = []mutation{
	{
		Name:  "produce-parses-twice",
		Rule:  "a produce parses its batch headers once (ParseBatches) and the write reuses that parse",
		Edits: []edit{{File: "resolver/produce.go", Old: "\tr, p := h.r, h.p\n\tif in.err != nil {", New: "\tr, p := h.r, h.p\n\tif in = ParseBatches(in.raw); in.err != nil {"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestCrossingsPerPartition"}},
	},
	{
		Name:  "fetch-resolves-twice",
		Rule:  "a fetch resolves its partition once and reads through that binding",
		Edits: []edit{{File: "resolver/handle.go", Old: "\tml, err := h.readable() // step 1 was Resolve", New: "\th, _ = h.rebind()\n\tml, err := h.readable() // step 1 was Resolve"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestCrossingsPerPartition"}, {Pkg: "./resolver/", Run: "TestPartitionResolvedOnce"}},
	},
	{
		Name:  "fetch-takes-bounds-again",
		Rule:  "a fetch answers the bounds of the snapshot it read under, not a second snapshot",
		Edits: []edit{{File: "resolver/handle.go", Old: "\tml, err := h.readable() // step 1 was Resolve", New: "\t_, _ = h.snapshot()\n\tml, err := h.readable() // step 1 was Resolve"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestCrossingsPerPartition"}},
	},
}
