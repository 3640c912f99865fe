package main

// Deliberate breaks of transaction version 2 in cluster mode (implicit
// adds across nodes, cluster/txnmark), in a file of their own.

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
}
