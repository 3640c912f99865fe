package main

// Deliberate breaks of what happens while a transactional id's previous
// transaction is being completed (its markers not all durable yet): the
// adds that wait for it (kafka/txn addqueue.go, cluster/txnmark adds.go)
// a Close during it (kafka/txn end.go) and a first batch after the
// decision (resolver/txnstate), in a file of their own.

func init() { mutations = append(mutations, txnCompletingMutations...) }

var txnCompletingMutations = []mutation{
	{
		Name: "txnadd-waiting-holds-slot",
		Rule: "implicit adds across nodes: an answer waiting for its transactional id's completion gives its answer slot up, so waiting adds never stall other ids' adds",
		Edits: []edit{{File: "cluster/txnmark/adds.go",
			Old: "\ta.waiting++\n\ts.waiting = true\n\t<-a.sem // held by this answer: never blocks\n",
			New: ""}},
		Tests: []testRun{
			{Pkg: "./cluster/txnmark/", Run: "TestImplicitAddWaitingHoldsNoSlot"},
			{Pkg: "./server/", Run: "TestClusterTxnV2WaitingAddsLeaveOthersAnswered"},
		},
	},
	{
		Name: "txnadd-waiting-unbounded",
		Rule: "implicit adds across nodes: the answers waiting for their id's completion are bounded; past the bound an add is answered CONCURRENT_TRANSACTIONS",
		Edits: []edit{{File: "cluster/txnmark/adds.go",
			Old: "\tif a.waiting >= a.maxWaiting {\n",
			New: "\tif a.waiting >= a.maxWaiting && a.maxWaiting < 0 {\n"}},
		Tests: []testRun{{Pkg: "./cluster/txnmark/", Run: "TestImplicitAddWaitingBounded"}},
	},
	{
		Name: "txn-add-during-completion-not-told",
		Rule: "waiting for a completion: an add arriving while its id's completion holds the lock is told it waits, and answered CONCURRENT_TRANSACTIONS when it has no room to",
		Edits: []edit{{File: "kafka/txn/addqueue.go",
			Old: "\tif q.completing && r.waiting != nil {\n",
			New: "\tif q.completing && r.waiting != nil && r.tv < 0 {\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestImplicitAddDuringCompletionToldToWait"}},
	},
	{
		Name: "txn-add-queued-not-told",
		Rule: "waiting for a completion: an add queued when its id's completion starts is told it waits",
		Edits: []edit{{File: "kafka/txn/addqueue.go",
			Old: "\t\tif r.waiting != nil && !r.notified {\n",
			New: "\t\tif r.waiting != nil && r.notified {\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestImplicitAddQueuedBeforeCompletionToldToWait"}},
	},
	{
		Name: "txn-close-waits-for-markers",
		Rule: "a prompt Close: Close stops a completion's wait for its markers, the Prepare state left for recovery",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\tcase <-c.stop:\n\t\treturn st.Partitions, errClosing\n",
			New: "\tcase <-(chan struct{})(nil):\n\t\treturn st.Partitions, errClosing\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestCloseDuringMarkerReturnsPromptly"}},
	},
	{
		Name: "txn-decided-registration-takes-first-batch",
		Rule: "a decided registration takes no first batch: a batch that would start a decided transaction on a partition is refused until its marker",
		Edits: []edit{{File: "resolver/txnstate/state.go",
			Old: "\tcase e != nil && h.ProducerEpoch == e.Epoch && e.First < 0 && e.Decided:\n",
			New: "\tcase e != nil && h.ProducerEpoch == e.Epoch && e.First < 0 && e.Decided && e.Epoch < 0:\n"}},
		Tests: []testRun{
			{Pkg: "./resolver/txnstate/", Run: "TestDecidedRegistrationTakesNoFirstBatch"},
			{Pkg: "./test/", Run: "TestTxnV1ProduceAfterDecisionRefused"},
		},
	},
	{
		Name: "txn-decision-not-told-to-partitions",
		Rule: "a decided registration takes no first batch: EndTxn tells the partitions of the decision before it answers",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\tc.decidePartitions(st)\n",
			New: ""}},
		Tests: []testRun{{Pkg: "./test/", Run: "TestTxnV1ProduceAfterDecisionRefused"}},
	},
}
