package main

// Deliberate breaks of the completion after the markers
// (kafka/txn/complete.go), in a file of their own.

func init() { mutations = append(mutations, txnCompleteMutations...) }

var txnCompleteMutations = []mutation{
	{
		Name: "txn-complete-lock-released-at-answer",
		Rule: "completion after the markers: the id's lock is held until the Complete state is durable",
		Edits: []edit{{File: "kafka/txn/complete.go",
			Old: "c.background(func() { defer t.mu.Unlock(); finish() })",
			New: "c.background(func() { t.mu.Unlock(); finish() })"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndAnswersBeforeComplete"}},
	},
	{
		Name: "txn-complete-offsets-after-answer",
		Rule: "completion after the markers: a transaction with offsets is completed before EndTxn answers",
		Edits: []edit{{File: "kafka/txn/complete.go",
			Old: "if len(t.st.Groups) > 0 || !c.background(",
			New: "if !c.background("}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndWithOffsetsAnswersAfterComplete"}},
	},
	{
		Name: "txn-complete-share-kept",
		Rule: "the transaction bounds: a transaction's end gives its partitions' share back once its markers are durable",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\tmarked.Partitions = nil\n",
			New: ""}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestHeldEntriesBounded"}},
	},
}
