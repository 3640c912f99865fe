package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// WriteTxnMarkers from a client (the Admin's abortTransaction) ends a
// hanging transaction: the ABORT marker moves the LSO past it and lists it
// as aborted; an older producer epoch is INVALID_PRODUCER_EPOCH, an older
// coordinator epoch TRANSACTION_COORDINATOR_FENCED, a missing partition
// UNKNOWN_TOPIC_OR_PARTITION, each per partition, as Kafka answers.
func TestWriteTxnMarkersAbortsHangingTransaction(t *testing.T) {
	res := openResolver(t)
	if _, err := res.CreateTopic("hang", 2, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Resolver: res})
	g := &sessionRig{t: t, s: s, c: dialRaw(t, s.Addr())}
	for part := range int32(2) {
		if err := res.AddTxnPartition("hang", part, 7, 3); err != nil {
			t.Fatal(err)
		}
		if _, err := res.Produce("hang", part, txnRecords(1000, 7, 3, 0, "x")); err != nil {
			t.Fatal(err)
		}
	}
	markers := func(epoch int16, coordEpoch int32, parts ...int32) []int16 {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.SetVersion(1)
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch = 7, epoch, coordEpoch
		for _, topic := range []string{"hang", "missing"} {
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic, mt.Partitions = topic, parts
			m.Topics = append(m.Topics, mt)
		}
		req.Markers = append(req.Markers, m)
		resp := ask(g.c, req).(*kmsg.WriteTxnMarkersResponse)
		var codes []int16
		for _, mt := range resp.Markers[0].Topics {
			for _, p := range mt.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
		return codes
	}
	lso := func(part int32) int64 {
		p := g.fetch(fetchReq(0, -1, []fetchPart{{"hang", part, 0}}, nil)).Topics[0].Partitions[0]
		return p.LastStableOffset
	}
	if lso(0) != 0 || lso(1) != 0 {
		t.Fatalf("LSO before %d %d, want 0 0", lso(0), lso(1))
	}
	unknown := kerr.UnknownTopicOrPartition.Code
	if got := markers(2, 5, 0); got[0] != kerr.InvalidProducerEpoch.Code || got[1] != unknown {
		t.Fatalf("older producer epoch: %v", got)
	}
	if got := markers(3, 5, 0); got[0] != 0 || got[1] != unknown {
		t.Fatalf("abort of partition 0: %v", got)
	}
	if lso(0) != 2 || lso(1) != 0 {
		t.Fatalf("LSO after aborting partition 0: %d %d, want 2 0", lso(0), lso(1))
	}
	req := fetchReq(0, -1, []fetchPart{{"hang", 0, 0}}, nil)
	req.IsolationLevel = 1
	if a := g.fetch(req).Topics[0].Partitions[0].AbortedTransactions; len(a) != 1 || a[0].ProducerID != 7 || a[0].FirstOffset != 0 {
		t.Fatalf("aborted transactions %+v", a)
	}
	// Partition 0 has seen coordinator epoch 5 from this producer.
	if err := res.AddTxnPartition("hang", 0, 7, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := res.Produce("hang", 0, txnRecords(1000, 7, 3, 1, "y")); err != nil {
		t.Fatal(err)
	}
	if got := markers(3, 4, 0); got[0] != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("older coordinator epoch: %v", got)
	}
	if got := markers(3, 5, 0, 1); got[0] != 0 || got[1] != 0 {
		t.Fatalf("abort of both: %v", got)
	}
	if lso(0) != 4 || lso(1) != 2 {
		t.Fatalf("LSO after aborting both: %d %d, want 4 2", lso(0), lso(1))
	}
}
