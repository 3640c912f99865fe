package main

// Deliberate breaks of the answer once decided (kafka/txn/complete.go),
// in a file of their own.

func init() { mutations = append(mutations, txnCompleteMutations...) }

var txnCompleteMutations = []mutation{
	{
		Name: "txn-complete-lock-released-at-answer",
		Rule: "answer once decided: the id's lock is held until the markers and the Complete state are durable",
		Edits: []edit{{File: "kafka/txn/complete.go",
			Old: "c.background(func() { defer t.mu.Unlock(); c.endCompleteLocked(t) })",
			New: "c.background(func() { t.mu.Unlock(); c.endCompleteLocked(t) })"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndAnswersBeforeComplete|TestEndAnswersOnceDecided"}},
	},
	{
		Name: "txn-complete-offsets-before-answer",
		Rule: "answer once decided: EndTxn of a transaction with offsets answers once the decision is durable, as Kafka's, its offsets committed with the Complete state after",
		Edits: []edit{{File: "kafka/txn/complete.go",
			Old: "\tif !c.background(",
			New: "\tif len(t.st.Groups) > 0 || !c.background("}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndWithOffsetsAnswersOnceDecided"}},
	},
	{
		Name: "txn-complete-offsets-left-pending-after-answer",
		Rule: "offsets O6: a transaction answered at its decision still commits (or drops) its offsets with its Complete state",
		Edits: []edit{{File: "kafka/txn/complete.go",
			Old: "c.background(func() { defer t.mu.Unlock(); c.endCompleteLocked(t) })",
			New: "c.background(func() { defer t.mu.Unlock(); t.st.Groups = nil; c.endCompleteLocked(t) })"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndWithOffsetsAnswersOnceDecided|TestEndAbortWithOffsetsDropsThem"}},
	},
	{
		Name: "txn-end-answered-before-decision-durable",
		Rule: "answer once decided: EndTxn answers only once the decision (PrepareCommit or PrepareAbort) is durable",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\tif err := c.persist(t, next); err != nil {\n\t\treturn noPID, noEpoch, errCoordinatorNA\n\t}\n\tc.decidePartitions(st)\n\thandedOff = c.endLocked(t)\n",
			New: "\tc.setState(t, next)\n\tc.decidePartitions(st)\n\thandedOff = c.endLocked(t)\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndAnsweredDecisionSurvivesRestart"}},
	},
	{
		Name: "txn-end-next-before-markers",
		Rule: "answer once decided: the id's next transaction starts only once every marker of the previous one is durable, so no marker ends a batch of it",
		Edits: []edit{{File: "kafka/txn/complete.go",
			Old: "c.background(func() { defer t.mu.Unlock(); c.endCompleteLocked(t) })",
			New: "c.background(func() { st := t.st; _ = c.finishLocked(t); t.mu.Unlock(); _, _ = c.writeMarkers(st, st.State.String() == \"PrepareCommit\") })"}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestEndAnswersOnceDecided|TestEndNextImplicitAddWaitsForMarkers"},
			{Pkg: "./server/", Run: "TestClusterTxnV2NextWaitsForMarkers"},
		},
	},
	{
		Name: "txn-complete-share-kept",
		Rule: "the transaction bounds: a transaction's end gives its partitions' share back once its markers are durable",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\tmarked.Partitions = nil\n",
			New: ""}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestHeldEntriesBounded|TestEndShareBackAfterMarkers"}},
	},
}
