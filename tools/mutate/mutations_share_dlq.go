package main

// Deliberate breaks of share-group dead-letter queues (KIP-1191,
// kafka/share dlq.go), in a file of their own.

func init() { mutations = append(mutations, shareDLQMutations...) }

var shareDLQMutations = []mutation{
	{
		Name: "share-dlq-write-skipped",
		Rule: "share-group dead-letter queues: an archiving record's copy is written to the DLQ topic before the record is archived",
		Edits: []edit{{File: "kafka/share/dlq.go",
			Old: "err := c.cfg.DeadLetters.Produce(topic, dst, encodeBatch(recs, now))",
			New: "err, _, _ := error(nil), now, dst"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestDLQResumesArchivingAfterRestart"}},
	},
	{
		Name: "share-dlq-archived-at-once",
		Rule: "share-group dead-letter queues: a record rejected or out of deliveries in a group with a DLQ becomes archiving, not archived, until its copy is written",
		Edits: []edit{{File: "kafka/share/partition.go",
			Old: "\tif dlq {\n\t\treturn archiving\n\t}",
			New: "\tif false && dlq {\n\t\treturn archiving\n\t}"}},
		Tests: []testRun{{Pkg: "./test/", Run: "TestShareGroupDeadLetterQueue"}},
	},
	{
		Name: "share-dlq-transient-failure-archives",
		Rule: "share-group dead-letter queues: a DLQ write that failed in a way retrying may mend leaves the records archiving and is tried again",
		Edits: []edit{{File: "kafka/share/dlq.go",
			Old: "\t\tif !errors.As(err, &never) {",
			New: "\t\tif false && !errors.As(err, &never) {"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestDLQTransientFailureRetried"}},
	},
}
