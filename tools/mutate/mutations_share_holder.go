package main

// Mutations of the share coordinator's answer to a fetch whose member
// holds records in the partition it can acquire nothing more from
// (kafka/share/partition.go answerHolderLocked), and of the acquire
// modes' bound on the records a fetch acquires.

func init() { mutations = append(mutations, shareHolderMutations...) }

var shareHolderMutations = []mutation{
	{
		Name:  "share-holder-first-fetch-waits",
		Rule:  "the in-flight window bound: a holder's first fetch since it was given records, finding nothing to acquire, is answered at once",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\tif answerNow {\n", New: "\t\tif false && answerNow {\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareHolderFetchAtHighWatermarkAnswersAtOnce|TestShareFetchOnOwnFullWindowWaitsBriefly"}},
	},
	{
		Name:  "share-holder-short-poll-only-on-full-window",
		Rule:  "the in-flight window bound: a holder's fetch polls ownBlockWait at most whatever it finds nothing for (a full window, promised records, the high watermark)",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\treturn acquisition{nextExpiry: next, ownBlock: holds, answerNow: now, owing: t.owing}, true\n", New: "\t\treturn acquisition{nextExpiry: next, ownBlock: holds && !ok, answerNow: now && !ok, owing: t.owing}, true\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareHolderFetchAtHighWatermarkAnswersAtOnce"}},
	},
	{
		Name:  "share-batch-optimized-splits-batches",
		Rule:  "one acquirer per record: in batch-optimized mode an acquisition takes a batch it began below MaxRecords to its end",
		Edits: []edit{{File: "kafka/share/partition.go", Old: "\t\t\tlimit = math.MaxInt\n", New: "\t\t\tlimit = a.max\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestBatchOptimizedAcquiresWholeBatches"}},
	},
	{
		Name:  "share-record-limit-exceeded",
		Rule:  "one acquirer per record: in record-limit mode an acquisition takes at most MaxRecords",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\tf.whole = req.ShareAcquireMode == 0\n", New: "\tf.whole = true\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestBatchOptimizedAcquiresWholeBatches"}},
	},
	{
		Name:  "share-batch-begun-past-window",
		Rule:  "the in-flight window bound: a batch-optimized acquisition begins a batch past the window's end only when the window holds it whole, or nothing is in flight before it",
		Edits: []edit{{File: "kafka/share/partition.go", Old: "\treturn sp.first < p.end() || len(p.recs) == 0 || sp.last-p.start < int64(maxLocks)\n", New: "\treturn true\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestBatchOptimizedWaitsForRoomForTheWholeBatch|TestHolderFetchOnABatchThatDoesNotFitAnswersAtOnce"}},
	},
	{
		Name:  "share-holder-read-nothing-long-polls",
		Rule:  "the in-flight window bound: a holder's fetch that read records it could not take waits as a holder's fetch (at once, then ownBlockWait)",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\t\tholds, answerNow = p.answerHolderLocked(member)\n", New: "\t\t\t_, _ = p.answerHolderLocked(member)\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestHolderFetchOnABatchThatDoesNotFitAnswersAtOnce"}},
	},
}
