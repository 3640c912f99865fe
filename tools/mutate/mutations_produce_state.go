package main

// Deliberate breaks of the produce path's per-entry state kept in place:
// the idempotent producers' state updated where it is (resolver
// producer_set.go) and the tail cache's arrays kept across evictions
// (storage tailcache.go), in a file of their own.

func init() { mutations = append(mutations, produceStateMutations...) }

var produceStateMutations = []mutation{
	{
		Name:  "producer-in-place-window-six",
		Rule:  "idempotent producers: a producer updated in place remembers Kafka's 5 batches, not more",
		Edits: []edit{{File: "resolver/producers.go", Old: "\tif n := len(ps.batches); n >= maxTrackedBatches {\n", New: "\tif n := len(ps.batches); n > maxTrackedBatches {\n"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestIdempotenceWindowIsKafkas"}},
	},
	{
		Name:  "producer-in-place-any-epoch",
		Rule:  "idempotent producers: only an append in the producer's epoch updates its state in place; a new epoch replaces it",
		Edits: []edit{{File: "resolver/producer_set.go", Old: "ps != nil && ps.epoch == h.ProducerEpoch {", New: "ps != nil {"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestIdempotence$"}},
	},
	{
		Name:  "producer-in-place-last-seen-kept",
		Rule:  "producer expiry: an append updated in place counts as the producer's latest",
		Edits: []edit{{File: "resolver/producer_set.go", Old: "\t\tps.lastSeen, ps.lastTS = now, h.MaxTimestamp\n", New: "\t\tps.lastTS = h.MaxTimestamp\n"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestProducerStateUpdatedInPlace"}},
	},
	{
		Name:  "producer-in-place-recency-kept",
		Rule:  "producer expiry and the producer cap: an append updated in place makes the producer the most recent",
		Edits: []edit{{File: "resolver/producer_set.go", Old: "\t\ts.order.MoveToBack(ps.elem)\n\t} else {\n\t\ts.put(", New: "\t} else {\n\t\ts.put("}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestProducerStateUpdatedInPlace"}},
	},
	{
		Name:  "producer-new-epoch-second-place",
		Rule:  "the producer cap: a producer's new state takes its one place in the recency order",
		Edits: []edit{{File: "resolver/producer_set.go", Old: "\t\tps.elem, old.elem = old.elem, nil\n", New: "\t\told.elem = nil\n"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestProducerStateUpdatedInPlace"}},
	},
	{
		Name:  "tail-kept-array-not-cleared",
		Rule:  "tail cache: an emptied log tail keeps its array but none of its entries' payloads or frames",
		Edits: []edit{{File: "storage/tailcache.go", Old: "\t\tt.mu.entries[t.mu.head] = cachedEntry{}\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestTailCacheArraysKeepNothing"}},
	},
	{
		Name:  "tail-fifo-compaction-not-cleared",
		Rule:  "tail cache: the eviction order compacted in place holds no reference past its live part",
		Edits: []edit{{File: "storage/tailcache.go", Old: "\t\tclear(c.mu.fifo[n:])\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestTailCacheArraysKeepNothing"}},
	},
	{
		Name:  "write-vector-kept",
		Rule:  "a write's vector is emptied once its frame is written: the store keeps no payload it does not say it holds",
		Edits: []edit{{File: "storage/append.go", Old: "\t\tl.w.iov = [2][]byte{}\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestTailCacheArraysKeepNothing"}},
	},
	{
		Name:  "produce-checkpoint-due-never",
		Rule:  "incremental producer checkpoints: the produce that finds the count due at its append starts one once durable",
		Edits: []edit{{File: "resolver/produce.go", Old: "\tw.ckptDue = p.checkpointDueLocked()\n", New: ""}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestIdempotenceCheckpointReplay"}},
	},
}
