package main

// Deliberate breaks of transactions in cluster mode (cluster/txnmark:
// implicit adds across nodes, one decision transaction, direct markers),
// in a file of their own.

func init() { mutations = append(mutations, clusterTxnMutations...) }

var clusterTxnMutations = []mutation{
	{
		Name: "txnadd-answer-unfenced",
		Rule: "implicit adds across nodes: an implicit add is answered only under the coordinator ownership and over the request as asked (its mod revision), so a coordinator that lost the role answers nothing",
		Edits: []edit{{File: "cluster/txnmark/adds.go",
			Old: "\tcmp := append(append([]clientv3.Cmp(nil), guard...), clientv3.Compare(clientv3.ModRevision(key), \"=\", rev))\n",
			New: "\tcmp := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), \">\", 0)}\n"}},
		Tests: []testRun{{Pkg: "./cluster/txnmark/", Run: "TestImplicitAddFencedCoordinatorAnswersNothing"}},
	},
	{
		Name: "txnadd-answers-unready-coordinator",
		Rule: "implicit adds across nodes: a coordinator not ready to answer (its restored store not swapped in) leaves the request to the coordinator it becomes",
		Edits: []edit{{File: "cluster/txnmark/adds.go",
			Old: "\tif notReady(req.Code) {\n",
			New: "\tif notReady(req.Code) && req.Code < 0 {\n"}},
		Tests: []testRun{
			{Pkg: "./cluster/txnmark/", Run: "TestImplicitAddWaitsForReadyCoordinator"},
			{Pkg: "./server/", Run: "TestClusterTxnV2CoordinatorMovesMidAdd"},
		},
	},
	{
		Name: "txnmark-direct-marker-unfenced",
		Rule: "direct markers: a marker on a partition the coordinator leads is written only once the decision transaction under the coordinator ownership committed, so a coordinator that lost the role writes none",
		Edits: []edit{{File: "cluster/txnmark/markers.go",
			Old: "\t\tif !led[i] || derrs[i] != nil {\n",
			New: "\t\tif !led[i] {\n"}},
		Tests: []testRun{{Pkg: "./cluster/txnmark/", Run: "TestDirectMarkerFencedCoordinatorWritesNothing"}},
	},
	{
		Name: "txnmark-direct-marker-not-awaited",
		Rule: "direct markers: WriteTxnMarkers answers only once the marker on a partition the coordinator leads is durable",
		Edits: []edit{{File: "cluster/txnmark/markers.go",
			Old: "\twg.Wait()\n\tr.mu.Lock()\n",
			New: "\tr.mu.Lock()\n"}},
		Tests: []testRun{{Pkg: "./cluster/txnmark/", Run: "TestDirectMarkerDurableBeforeReturn"}},
	},
	{
		Name: "txnmark-decision-per-partition",
		Rule: "one decision transaction: all of a transaction's decisions in one etcd transaction, split only past etcd's max-txn-ops",
		Edits: []edit{{File: "cluster/txnmark/markers.go",
			Old: "\t\tto := min(len(ops), from+r.opts.MaxTxnOps)\n",
			New: "\t\tto := from + 1\n"}},
		Tests: []testRun{{Pkg: "./cluster/txnmark/", Run: "TestDecisionsInOneTransaction"}},
	},
	{
		Name: "txnmark-decisions-past-max-txn-ops",
		Rule: "one decision transaction: a transaction with more partitions than etcd's max-txn-ops is split",
		Edits: []edit{{File: "cluster/txnmark/markers.go",
			Old: "\t\tto := min(len(ops), from+r.opts.MaxTxnOps)\n",
			New: "\t\tto := len(ops)\n"}},
		Tests: []testRun{{Pkg: "./cluster/txnmark/", Run: "TestDecisionsInOneTransaction"}},
	},
	{
		Name: "txn-markers-not-batched",
		Rule: "one decision transaction: EndTxn hands a MarkerBatcher all of the transaction's partitions in one call",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\tif b, ok := c.parts.(MarkerBatcher); ok {\n",
			New: "\tif b, ok := c.parts.(MarkerBatcher); ok && len(st.Partitions) == 1 {\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndTxnMarkersInOneBatch"}},
	},
	{
		Name: "txn-batched-marker-failure-ignored",
		Rule: "durable partition adds: a transaction whose batched markers are not all durable stays in its Prepare state",
		Edits: []edit{{File: "kafka/txn/end.go",
			Old: "\t\t\tif tp := st.Partitions[i]; err != nil && c.cfg.Topics.PartitionExists(tp.Topic, tp.Partition) {\n",
			New: "\t\t\tif tp := st.Partitions[i]; err != nil && !c.cfg.Topics.PartitionExists(tp.Topic, tp.Partition) {\n"}},
		Tests: []testRun{{Pkg: "./kafka/txn/", Run: "TestEndTxnMarkersInOneBatch"}},
	},
}
