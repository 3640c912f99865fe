package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// A transaction's commit keeps a plain OffsetCommit written after its
// TxnOffsetCommit: Kafka keeps the most recent commit by log position. A
// real Apache Kafka 4.4 broker answers 20 after TxnOffsetCommit(10),
// OffsetCommit(20), EndTxn(commit), and 15 when TxnOffsetCommit(15)
// follows the 20.
func TestTxnCommitKeepsLaterOffsetCommit(t *testing.T) {
	g := newGateway(t)
	g.createTopic("order", 1)
	// Before topic ids in OffsetCommit (v10): these requests name topics.
	cl := g.client(kgo.MaxVersions(kversion.V3_9_0()))
	for i, tc := range []struct {
		txnAfter int64 // a second TxnOffsetCommit after the plain one (0: none)
		want     int64
	}{{0, 20}, {15, 15}} {
		txid, group := "order-txn", "order-group-"+string(rune('a'+i))
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.TransactionalID, ip.TransactionTimeoutMillis = &txid, 60_000
		ipr := request[*kmsg.InitProducerIDResponse](t, cl, ip)
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txid, ipr.ProducerID, ipr.ProducerEpoch, group
		if code := request[*kmsg.AddOffsetsToTxnResponse](t, cl, ao).ErrorCode; ipr.ErrorCode != 0 || code != 0 {
			t.Fatalf("init %d, add offsets %d", ipr.ErrorCode, code)
		}
		txnCommit := func(off int64) {
			r := kmsg.NewPtrTxnOffsetCommitRequest()
			r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = txid, group, ipr.ProducerID, ipr.ProducerEpoch, -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = "order"
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = off, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			if code := request[*kmsg.TxnOffsetCommitResponse](t, cl, r).Topics[0].Partitions[0].ErrorCode; code != 0 {
				t.Fatalf("TxnOffsetCommit(%d): %d", off, code)
			}
		}
		txnCommit(10)
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Group, oc.Generation = group, -1
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic = "order"
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Offset, op.LeaderEpoch = 20, -1
		ot.Partitions = append(ot.Partitions, op)
		oc.Topics = append(oc.Topics, ot)
		if code := request[*kmsg.OffsetCommitResponse](t, cl, oc).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("OffsetCommit(20): %d", code)
		}
		if tc.txnAfter > 0 {
			txnCommit(tc.txnAfter)
		}
		et := kmsg.NewPtrEndTxnRequest()
		et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = txid, ipr.ProducerID, ipr.ProducerEpoch, true
		if code := request[*kmsg.EndTxnResponse](t, cl, et).ErrorCode; code != 0 {
			t.Fatalf("EndTxn: %d", code)
		}
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Group = group
		ft := kmsg.NewOffsetFetchRequestTopic()
		ft.Topic, ft.Partitions = "order", []int32{0}
		of.Topics = append(of.Topics, ft)
		resp := stableOffsets(t, cl, of) // committed with the Complete state, after EndTxn's answer
		if got := resp.Topics[0].Partitions[0].Offset; got != tc.want {
			t.Fatalf("case %d: committed %d, want %d", i, got, tc.want)
		}
	}
}
