package main

// Deliberate breaks of the group commits: share-partition states
// (kafka/share writer.go) and batched consumer group heartbeats
// (kafka/group consumer_batch.go), in a file of their own.

func init() { mutations = append(mutations, shareCommitMutations...) }

var shareCommitMutations = []mutation{
	{
		Name:  "share-ack-answered-before-sync",
		Rule:  "the durable share-partition state: an acknowledgement is answered only after the write carrying its state returned",
		Edits: []edit{{File: "kafka/share/ack.go", Old: "\tfor _, w := range waits {\n\t\tif err := w.wait(); err != nil {", New: "\tfor _, w := range waits {\n\t\tgo w.wait()\n\t\tif err := error(nil); err != nil {"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareAckAnsweredAfterItsWrite"}},
	},
	{
		Name:  "share-window-move-no-wake",
		Rule:  "the in-flight window bound: an acknowledgement that moves the share-partition start offset wakes the fetches waiting on a full window",
		Edits: []edit{{File: "kafka/share/partition.go", Old: "\tif room := freed + int(p.start-start); room > 0 {", New: "\tif room := freed + 0*int(p.start-start); room > 0 {"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestAckAtStartWakesWindowWaiters"}},
	},
	{
		Name:  "share-writer-flight-done-early",
		Rule:  "the durable share-partition state: a submitter's write is done only once the synced batch holding its state returned",
		Edits: []edit{{File: "kafka/share/writer.go", Old: "\t\tf.err = w.write(batch)\n\t\tclose(f.done)\n", New: "\t\tclose(f.done)\n\t\tf.err = w.write(batch)\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestStateWriterGroupsAndWaits"}},
	},
	{
		Name:  "share-fetch-answered-before-sync",
		Rule:  "the durable share-partition state: a fetch is answered only after the writes of its partitions' acquisitions returned, and a failed one answers its partition with nothing",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\twrites.settle(c, results)\n\tresp.Topics = c.answer(results, parts, fresh, w)", New: "\tresp.Topics = c.answer(results, parts, fresh, w)"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareFetchWaitsOnceForItsPartitions"}},
	},
	{
		Name:  "share-join-answered-before-epoch-sync",
		Rule:  "share member epochs: a heartbeat that shows a new group epoch is answered only after the write of the epoch returned",
		Edits: []edit{{File: "kafka/share/group.go", Old: "\tif err := written.wait(); err != nil {\n\t\t// The epoch", New: "\tif err := error(nil); written != nil && err != nil {\n\t\t// The epoch"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareJoinAnsweredAfterEpochWrite"}},
	},
	{
		Name:  "share-fetch-ack-failure-unreported",
		Rule:  "the durable share-partition state: an acknowledgement carried by a ShareFetch whose write failed answers the failure",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\tcase x.ack:\n\t\t\tr.ackCode = c.failCode(err)\n", New: "\t\tcase x.ack:\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareFetchAckWriteFailureAnswered"}},
	},
	{
		Name:  "share-init-failed-write-kept",
		Rule:  "the share-partition start offset: a partition's initial state is used only once its write returned without error",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\t\terr := written.wait()\n", New: "\t\t\terr := error(nil)\n\t\t\t_ = written.wait()\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestSharePartitionInitFailedLeavesNoState"}},
	},
	{
		Name:  "share-own-full-window-long-polls",
		Rule:  "the in-flight window bound: a fetch whose member holds records in the full window it waits on waits ownBlockWait at most",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\tif ownBlock {\n", New: "\t\tif false && ownBlock {\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareFetchOnOwnFullWindowWaitsBriefly"}},
	},
}

func init() { mutations = append(mutations, consumerBatchMutations...) }

var consumerBatchMutations = []mutation{
	{
		Name:  "consumer-batch-failed-write-answered-ok",
		Rule:  "durable consumer group state: a heartbeat applied in a batch is answered with the batch's write error when that write fails",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\t\t\t\t\tif b.resp.ErrorCode == errNone {", New: "\t\t\t\t\tif false {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBatchAnsweredAfterItsWrite"}},
	},
	{
		Name:  "consumer-batch-write-skipped",
		Rule:  "durable consumer group state: a batch of heartbeats is written before any of them is answered",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\t\tif g.mu.dirty {\n", New: "\t\tif false && g.mu.dirty {\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBatchAnsweredAfterItsWrite|TestConsumerAnswerDurableAcrossCrash"}},
	},
	{
		Name:  "consumer-batch-downgrading-leave-batched",
		Rule:  "KIP-848's online downgrade: a leave that turns the group classic, decided when its batch is applied, is applied on its own after the batch before it is written",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\treturn m != nil && g.downgradeDueLocked(m)\n", New: "\treturn false && m != nil && g.downgradeDueLocked(m)\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBatchLeaveDowngradesInBatch"}},
	},
	{
		Name:  "consumer-batch-leaves-written-alone",
		Rule:  "batched consumer group heartbeats: leaves that cannot downgrade the group share the batch's one write",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\tm := g.mu.cons.members[req.MemberID]\n\treturn m != nil", New: "\tm := g.mu.cons.members[req.MemberID]\n\treturn true || m != nil"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBatchLeavesShareOneWrite"}},
	},
}
