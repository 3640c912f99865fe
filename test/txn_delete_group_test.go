package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Deleting a group (DeleteGroups) drops the pending offsets of every
// transaction in it, and OffsetDelete those of its partitions, as Apache
// Kafka's tombstones do: a transaction that commits afterwards commits
// nothing for them, so the deleted group stays gone and the deleted
// partition stays without an offset.
func TestTxnCommitAfterGroupDeletion(t *testing.T) {
	g := newGateway(t)
	const topic, txid, gone, kept = "delpend", "delpend-txn", "delpend-gone", "delpend-kept"
	g.createTopic(topic, 2)
	// Before topic ids in OffsetCommit (v10): these requests name topics.
	cl := g.client(kgo.MaxVersions(kversion.V3_9_0()))
	for _, group := range []string{gone, kept} { // an Empty group, as DeleteGroups needs
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Group, oc.Generation = group, -1
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: -1}}}}
		if code := request[*kmsg.OffsetCommitResponse](t, cl, oc).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("OffsetCommit %s: %d", group, code)
		}
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr(txid), 60_000
	ipr := request[*kmsg.InitProducerIDResponse](t, cl, ip)
	if ipr.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %d", ipr.ErrorCode)
	}
	for _, group := range []string{gone, kept} {
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txid, ipr.ProducerID, ipr.ProducerEpoch, group
		if code := request[*kmsg.AddOffsetsToTxnResponse](t, cl, ao).ErrorCode; code != 0 {
			t.Fatalf("AddOffsetsToTxn %s: %d", group, code)
		}
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = txid, group, ipr.ProducerID, ipr.ProducerEpoch, -1
		r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{
			{Partition: 0, Offset: 10, LeaderEpoch: -1}, {Partition: 1, Offset: 11, LeaderEpoch: -1}}}}
		for _, p := range request[*kmsg.TxnOffsetCommitResponse](t, cl, r).Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("TxnOffsetCommit %s/%d: %d", group, p.Partition, p.ErrorCode)
			}
		}
	}
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{gone}
	if code := request[*kmsg.DeleteGroupsResponse](t, cl, dg).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("DeleteGroups: %d", code) // Kafka deletes an Empty group with pending offsets
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = kept
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 1}}}}
	if resp := request[*kmsg.OffsetDeleteResponse](t, cl, od); resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetDelete: %+v", resp)
	}
	et := kmsg.NewPtrEndTxnRequest()
	et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = txid, ipr.ProducerID, ipr.ProducerEpoch, true
	if code := request[*kmsg.EndTxnResponse](t, cl, et).ErrorCode; code != 0 {
		t.Fatalf("EndTxn: %d", code)
	}
	fetch := func(group string) map[int32]int64 {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Group = group
		of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{0, 1}}}
		got := map[int32]int64{}
		for _, p := range stableOffsets(t, cl, of).Topics[0].Partitions {
			got[p.Partition] = p.Offset
		}
		return got
	}
	// kept's partition 0 is pending until the transaction's offsets are
	// completed, in the one batch of every group of the transaction.
	if got := fetch(kept); got[0] != 10 || got[1] != -1 {
		t.Fatalf("%s after commit: %v, want 0:10 and 1 without an offset", kept, got)
	}
	if got := fetch(gone); got[0] != -1 || got[1] != -1 {
		t.Fatalf("deleted group after commit: %v, want no offsets", got)
	}
	lg := request[*kmsg.ListGroupsResponse](t, cl, kmsg.NewPtrListGroupsRequest())
	for _, lgg := range lg.Groups {
		if lgg.Group == gone {
			t.Fatalf("deleted group listed after the commit: %+v", lgg)
		}
	}
}
