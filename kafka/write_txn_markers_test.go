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

// WriteTxnMarkers v2 names each marker's transaction version (KIP-1228)
// and the leader checks the marker's epoch by it, as Kafka does: at 0 and
// 1 an epoch older than the producer's is INVALID_PRODUCER_EPOCH and its
// own epoch ends the transaction; at 2 the marker must carry the bumped
// epoch (its own is INVALID_PRODUCER_EPOCH while the transaction is
// open), a retried marker at the bumped epoch is a success, and an older
// one INVALID_PRODUCER_EPOCH even with nothing open.
func TestWriteTxnMarkersV2TransactionVersion(t *testing.T) {
	res := openResolver(t)
	if _, err := res.CreateTopic("tv", 3, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Resolver: res})
	g := &sessionRig{t: t, s: s, c: dialRaw(t, s.Addr())}
	open := func(part int32, pid int64, epoch int16, seq int32) {
		t.Helper()
		if err := res.AddTxnPartition("tv", part, pid, epoch); err != nil {
			t.Fatal(err)
		}
		if _, err := res.Produce("tv", part, txnRecords(1000, pid, epoch, seq, "x")); err != nil {
			t.Fatal(err)
		}
	}
	marker := func(part int32, pid int64, epoch int16, tv int8) int16 {
		t.Helper()
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.SetVersion(2)
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.TransactionVersion = pid, epoch, tv
		m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "tv", Partitions: []int32{part}}}
		req.Markers = append(req.Markers, m)
		return ask(g.c, req).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
	}
	lso := func(part int32) int64 {
		return g.fetch(fetchReq(0, -1, []fetchPart{{"tv", part, 0}}, nil)).Topics[0].Partitions[0].LastStableOffset
	}
	fenced := kerr.InvalidProducerEpoch.Code
	// Transaction versions 0 and 1: the producer's own epoch ends it.
	for part, tv := range []int8{0, 1} {
		open(int32(part), 20+int64(part), 3, 0)
		if code := marker(int32(part), 20+int64(part), 2, tv); code != fenced {
			t.Errorf("TV%d older epoch: %v, want INVALID_PRODUCER_EPOCH", tv, kerr.ErrorForCode(code))
		}
		if code := marker(int32(part), 20+int64(part), 3, tv); code != 0 || lso(int32(part)) != 2 {
			t.Errorf("TV%d the producer's epoch: %v, LSO %d, want success and 2", tv, kerr.ErrorForCode(code), lso(int32(part)))
		}
	}
	// Transaction version 2: the bumped epoch only.
	open(2, 30, 3, 0)
	if code := marker(2, 30, 3, 2); code != fenced || lso(2) != 0 {
		t.Fatalf("TV2 the batches' epoch: %v, LSO %d, want INVALID_PRODUCER_EPOCH and 0", kerr.ErrorForCode(code), lso(2))
	}
	if code := marker(2, 30, 4, 2); code != 0 || lso(2) != 2 {
		t.Fatalf("TV2 the bumped epoch: %v, LSO %d, want success and 2", kerr.ErrorForCode(code), lso(2))
	}
	if code := marker(2, 30, 4, 2); code != 0 {
		t.Errorf("TV2 retried marker: %v, want success", kerr.ErrorForCode(code))
	}
	if code := marker(2, 30, 3, 2); code != fenced {
		t.Errorf("TV2 older epoch, nothing open: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
}
