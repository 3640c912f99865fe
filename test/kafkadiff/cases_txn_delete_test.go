package kafkadiff

import "github.com/twmb/franz-go/pkg/kmsg"

// caseTxnOffsetsDeleted asks what a deletion does to pending transactional
// offsets: DeleteGroups of an Empty group with a transaction's pending
// offsets, OffsetDelete of a partition with one, then the transaction's
// commit. Kafka's tombstones drop the pending offsets, so the commit
// brings neither back.
func caseTxnOffsetsDeleted(r *run) {
	const topic, id, gone, kept = "kd-txd", "kd-txd-id", "kd-txd-gone", "kd-txd-kept"
	r.createTopic(topic, 2)
	r.awaitCoordinator(1, id)
	for _, g := range []string{gone, kept} {
		r.awaitCoordinator(0, g)
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Group, oc.Generation = g, -1
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: -1}}}}
		r.doV(g+": plain commit v8", 8, oc)
	}
	fetch := func(g string, stable bool) *kmsg.OffsetFetchRequest {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.RequireStable, of.Group = stable, g
		of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{0, 1}}}
		of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: g, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0, 1}}}}}
		return of
	}
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	for _, g := range []string{gone, kept} {
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, pid, epoch, g
		r.doV(g+": add offsets v3", 3, ao)
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = id, g, pid, epoch, -1
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{
			{Partition: 0, Offset: 7, LeaderEpoch: -1}, {Partition: 1, Offset: 8, LeaderEpoch: -1}}}}
		r.doV(g+": txn offset commit v3", 3, tc)
	}
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{gone}
	r.doV("delete the group with pending offsets v2", 2, dg)
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = kept
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 1}}}}
	r.doV("offset delete of a pending partition v0", 0, od)
	r.doV("deleted group: fetch v7 require_stable while running", 7, fetch(gone, true))
	r.doV("kept group: fetch v7 require_stable while running", 7, fetch(kept, true))
	r.endTxn("end v4", 4, id, pid, epoch, true)
	for _, g := range []string{gone, kept} {
		r.await(g+": stable offsets", fetch(g, true), stableFetch)
		r.doV(g+": fetch v7 after the commit", 7, fetch(g, false))
	}
	dgs := kmsg.NewPtrDescribeGroupsRequest()
	dgs.Groups = []string{gone}
	r.do("deleted group described after the commit", dgs)
}

// stableFetch reports whether an OffsetFetch answered every partition
// without an error (none UNSTABLE_OFFSET_COMMIT), in either layout:
// per-group (v8 and later) or the one group's topics.
func stableFetch(resp kmsg.Response) bool {
	f := resp.(*kmsg.OffsetFetchResponse)
	var codes []int16
	for _, t := range f.Topics {
		for _, p := range t.Partitions {
			codes = append(codes, p.ErrorCode)
		}
	}
	for _, g := range f.Groups {
		codes = append(codes, g.ErrorCode)
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	}
	for _, c := range codes {
		if c != 0 {
			return false
		}
	}
	return f.ErrorCode == 0 && len(codes) > 0
}
