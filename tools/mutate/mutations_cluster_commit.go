package main

// Deliberate breaks of the pipelined group commit of cluster mode
// (in-order publication, storage I14), in a file of their own.

func init() { mutations = append(mutations, clusterCommitMutations...) }

var clusterCommitMutations = []mutation{
	{
		Name:  "pipeline-publishes-out-of-order",
		Rule:  "in-order publication: a commit publishes only after the commit begun before it finished publishing (no batch published, nor acknowledged, before an earlier one)",
		Edits: []edit{{File: "cluster/diskless/commit.go", Old: "\t<-prev.done\n\tvar keep []part\n", New: "\tvar keep []part\n"}},
		Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestPipelinePublishesInOrder"}},
	},
	{
		Name:  "pipeline-publishes-after-unpublished",
		Rule:  "in-order publication: a partition a commit still in flight did not publish is not published by the commit begun after it",
		Edits: []edit{{File: "cluster/diskless/commit.go", Old: "\t\tif err, ok := prev.unpublished[p.r.PKey]; ok {", New: "\t\tif err, ok := prev.unpublished[p.r.PKey]; ok && false {"}},
		Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestPipelineNothingAfterUnpublished"}},
	},
	{
		Name:  "pipeline-predecessor-drops-fence",
		Rule:  "in-order publication, fenced writers publish nothing: a partition refused because the commit before it found it fenced is refused as fenced (NOT_LEADER_OR_FOLLOWER), not as a storage fault",
		Edits: []edit{{File: "cluster/diskless/commit.go", Old: `"diskless: %s: %w (%w)", pkey, ErrPredecessor, err)`, New: `"diskless: %s: %w (%v)", pkey, ErrPredecessor, err)`}},
		Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestPipelineFencedBeforeIsFenced"}},
	},
	{
		Name:  "coalesced-ack-before-publication",
		Rule:  "coalesced publication, acknowledgement after PUT and commit: a commit published in the transaction of the commit begun before it is acknowledged only once that transaction published its own ranges",
		Edits: []edit{{File: "cluster/diskless/commit.go", Old: "\t\t\tq := p\n\t\t\tparts[i].then = &q\n", New: "\t\t\t_ = i\n"}},
		Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestPipelineCoalescesPublication"}},
	},
	{
		Name:  "pipeline-acks-after-failed-group",
		Rule:  "storage I14 (D2, D3): a group in flight when an earlier group failed its log is not acknowledged for that log",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tfailedSince(f.group, f.failed)\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedGroupAfterFailureNotAcknowledged"}},
	},
	{
		Name:  "pipeline-finishes-before-outcome",
		Rule:  "storage I14, I10: a pipelined group is indexed, published and acknowledged only after its own replication's outcome",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\t\terrs := f.wait()\n", New: "\t\t\tgo f.wait()\n\t\t\tvar errs map[LogID]error\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPipelinedGroupAfterFailureNotAcknowledged"}},
	},
}

func init() {
	mutations = append(mutations, mutation{
		Name:  "piece-pin-revalidates-wrong-record",
		Rule:  "merged ranges in pieces, pin revalidation: a piece is pinned by revalidating the whole range's record, not a record at the piece's own base",
		Edits: []edit{{File: "cluster/diskless/pins.go", Old: "c.rangeKey(r.PKey, r.Record)", New: "c.rangeKey(r.PKey, r.Base)"}},
		Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestMergedRangeReadsInPieces"}},
	})
}

// Deliberate breaks of the reader floors (floored reads): a node's reads
// below its caches covered by one floor record instead of a pin per read.
func init() {
	mutations = append(mutations,
		mutation{
			Name:  "collect-ignores-reader-floor",
			Rule:  "floored reads: Collect deletes an object unreferenced at revision Z only if every node's floor is at least Z",
			Edits: []edit{{File: "cluster/diskless/collect.go", Old: "\t\t\tif floored && lowest < st.rev {", New: "\t\t\tif floored && lowest < 0 {"}},
			Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestFlooredReadKeepsObjects"}},
		},
		mutation{
			Name:  "floor-advances-past-reads-in-flight",
			Rule:  "floored reads: a node's floor never moves past the revision a read in flight revalidated its ranges at",
			Edits: []edit{{File: "cluster/diskless/floor.go", Old: "\t\ttarget = min(target, *at)\n", New: "\t\t_ = at\n"}},
			Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestFlooredReadKeepsObjects"}},
		},
		mutation{
			Name:  "floored-read-without-its-record",
			Rule:  "floored reads: a read is floored only if the node's floor record under its lease exists at the revision its ranges are revalidated at",
			Edits: []edit{{File: "cluster/diskless/floor.go", Old: "len(kvs) == 0 || clientv3.LeaseID(kvs[0].Lease) != lease {", New: "len(kvs) < 0 {"}},
			Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestFlooredReadNeedsItsRecord"}},
		},
	)
}
