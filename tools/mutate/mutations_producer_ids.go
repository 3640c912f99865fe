package main

// Deliberate breaks of the producer id blocks (resolver/producerid), in a
// file of their own.

func init() { mutations = append(mutations, producerIDMutations...) }

var producerIDMutations = []mutation{
	{
		Name:  "producer-id-block-of-one",
		Rule:  "producer id blocks: a reservation moves the counter past a whole block",
		Edits: []edit{{File: "resolver/producerid/producerid.go", Old: "\tlimit := ids.next + blockSize\n", New: "\tlimit := ids.next + 1\n"}},
		Tests: []testRun{{Pkg: "./resolver/producerid/", Run: "TestProducerIDBlocks"}},
	},
	{
		Name:  "producer-id-written-every-time",
		Rule:  "producer id blocks: the block's other ids are handed out without a write",
		Edits: []edit{{File: "resolver/producerid/producerid.go", Old: "\tif id >= ids.limit {\n", New: "\tif id >= 0 {\n"}},
		Tests: []testRun{{Pkg: "./resolver/producerid/", Run: "TestProducerIDBlocks"}},
	},
	{
		Name:  "producer-id-first-block-lazy",
		Rule:  "producer id blocks: Open reserves the first block, so a start's first InitProducerID waits for no write",
		Edits: []edit{{File: "resolver/producerid/producerid.go", Old: "\tif shared == nil {\n\t\tif err := ids.reserveLocked(); err != nil {\n", New: "\tif shared != nil {\n\t\tif err := ids.reserveLocked(); err != nil {\n"}},
		Tests: []testRun{{Pkg: "./resolver/producerid/", Run: "TestProducerIDBlocks"}},
	},
	{
		Name:  "producer-id-never-reserved",
		Rule:  "producer id blocks: an id is reserved durably before it is returned, never reused after a restart",
		Edits: []edit{{File: "resolver/producerid/producerid.go", Old: "\tif id >= ids.limit {\n", New: "\tif id < 0 {\n"}},
		Tests: []testRun{{Pkg: "./resolver/producerid/", Run: "TestProducerIDBlocks"}, {Pkg: "./resolver/", Run: "TestInitProducerID$"}},
	},
}
