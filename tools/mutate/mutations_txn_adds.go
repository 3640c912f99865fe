package main

// Deliberate breaks of a transaction's adds written together
// (kafka/txn/addqueue.go, durable partition adds), in a file of their own.

func init() { mutations = append(mutations, txnAddsMutations...) }

var txnAddsMutations = []mutation{
	{
		Name: "txn-adds-not-grouped",
		Rule: "durable partition adds: adds of one id queued behind its write are written together in one store write",
		Edits: []edit{{File: "kafka/txn/addqueue.go",
			Old: "\tbatch := q.waiting\n\tq.waiting = nil\n\treturn batch\n",
			New: "\tbatch := q.waiting[:1]\n\tq.waiting = q.waiting[1:]\n\treturn batch\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestAddsQueuedWrittenTogether"}},
	},
	{
		Name: "txn-adds-failed-write-fails-first-only",
		Rule: "durable partition adds: a failed write fails every add in it",
		Edits: []edit{{File: "kafka/txn/addqueue.go",
			Old: "\t\tfor _, r := range accepted {\n\t\t\tr.code = errCoordinatorNA\n",
			New: "\t\tfor _, r := range accepted[:1] {\n\t\t\tr.code = errCoordinatorNA\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestAddsFailedWriteFailsAll"}},
	},
	{
		Name: "txn-adds-checked-once-per-batch",
		Rule: "Kafka's transaction errors: each queued add is checked on its own; a fenced add is not written",
		Edits: []edit{{File: "kafka/txn/addqueue.go",
			Old: "\t\tif r.code = checkProducer(t.st, r.pid, r.epoch); r.code != errNone {\n",
			New: "\t\tif r.code = checkProducer(t.st, batch[0].pid, batch[0].epoch); r.code != errNone {\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestAddsFencedInQueueNotWritten"}},
	},
	{
		Name: "txn-adds-answered-before-write",
		Rule: "durable partition adds: an add is answered only after the write holding its partitions returned",
		Edits: []edit{{File: "kafka/txn/addqueue.go",
			Old: "\tif err := c.persist(t, next); err != nil {\n",
			New: "\tgo c.persist(t, next)\n\tif err := error(nil); err != nil {\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestAddsQueuedWrittenTogether"}},
	},
}
