package test

import (
	"context"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// heldMarkers is the server's resolver as the transaction coordinator's
// partition side, with its markers held while hold is set.
type heldMarkers struct {
	mu   sync.Mutex
	res  *resolver.Resolver
	hold chan struct{} // nil: markers pass
	held chan struct{} // a value as a marker starts waiting
}

func (h *heldMarkers) resolver() *resolver.Resolver {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.res
}

func (h *heldMarkers) AllocateProducerID(ctx context.Context) (int64, error) {
	return h.resolver().AllocateProducerID(ctx)
}

func (h *heldMarkers) AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	return h.resolver().AddTxnPartition(topic, partition, pid, epoch)
}

func (h *heldMarkers) DecideTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	return h.resolver().DecideTxnPartition(topic, partition, pid, epoch)
}

func (h *heldMarkers) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, ce int32) error {
	h.mu.Lock()
	hold, held := h.hold, h.held
	h.mu.Unlock()
	if hold != nil {
		held <- struct{}{}
		<-hold
	}
	return h.resolver().WriteTxnMarker(topic, partition, pid, epoch, commit, ce)
}

// holdAll holds every marker from now until the returned release.
func (h *heldMarkers) holdAll() (held chan struct{}, release func()) {
	hold := make(chan struct{})
	held = make(chan struct{}, 16)
	h.mu.Lock()
	h.hold, h.held = hold, held
	h.mu.Unlock()
	var once sync.Once
	return held, func() {
		once.Do(func() {
			h.mu.Lock()
			h.hold = nil
			h.mu.Unlock()
			close(hold)
		})
	}
}

var _ txn.Decider = (*heldMarkers)(nil)

// A decided registration takes no first batch: a version-1 client (Produce
// below v12, no implicit add) that produces, without AddPartitionsToTxn,
// to a partition of its transaction after EndTxn decided it and before
// the marker lands there, at the same epoch, is refused with retriable
// NOT_ENOUGH_REPLICAS (Kafka's mapping of its verification's
// CONCURRENT_TRANSACTIONS), nothing is written, and once the marker is
// durable the batch is refused as for a partition not in any transaction
// (TRANSACTION_ABORTABLE at Produce v11). A partition that already had the transaction's batch
// is left as Kafka leaves it.
func TestTxnV1ProduceAfterDecisionRefused(t *testing.T) {
	parts := &heldMarkers{}
	g := newGatewayWith(t, gatewayOptions{txn: txn.Config{Partitions: parts}})
	parts.mu.Lock()
	parts.res = g.res
	parts.mu.Unlock()
	g.createTopic("decided", 2)
	cl := g.client(kgo.MaxVersions(kversion.V3_9_0())) // Produce v11, EndTxn v4: transaction version 1
	const id = "decided-tx"
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
	init := request[*kmsg.InitProducerIDResponse](t, cl, ip)
	if init.ErrorCode != 0 {
		t.Fatalf("init: %v", kerr.ErrorForCode(init.ErrorCode))
	}
	pid, epoch := init.ProducerID, init.ProducerEpoch
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = id, pid, epoch
	ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "decided", Partitions: []int32{0, 1}}}
	for _, p := range request[*kmsg.AddPartitionsToTxnResponse](t, cl, ap).Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("add partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}
	produce := func(partition int32, seq int32) kmsg.ProduceResponseTopicPartition {
		req := kmsg.NewPtrProduceRequest()
		req.TransactionID, req.Acks, req.TimeoutMillis = kmsg.StringPtr(id), -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "decided"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = partition, txnBatch(batchSpec{records: 1, pid: pid, epoch: epoch, seq: seq})
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return request[*kmsg.ProduceResponse](t, cl, req).Topics[0].Partitions[0]
	}
	if p := produce(0, 0); p.ErrorCode != 0 {
		t.Fatalf("produce in the transaction: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	held, release := parts.holdAll()
	t.Cleanup(release) // before the gateway stops
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	if r := request[*kmsg.EndTxnResponse](t, cl, end); r.ErrorCode != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	select {
	case <-held:
	case <-testCtx(t).Done():
		t.Fatal("no marker written after EndTxn")
	}
	if p := produce(1, 0); p.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("produce after the decision, before the marker: %v (offset %d), want NOT_ENOUGH_REPLICAS",
			kerr.ErrorForCode(p.ErrorCode), p.BaseOffset)
	}
	if _, hw, _, err := g.res.Bounds("decided", 1); err != nil || hw != 0 {
		t.Fatalf("refused batch written: high watermark %d, %v", hw, err)
	}
	release()
	waitTxnComplete(t, g, id)
	if p := produce(1, 0); p.ErrorCode != kerr.TransactionAbortable.Code {
		t.Fatalf("produce after the marker: %v, want TRANSACTION_ABORTABLE (Produce v11's INVALID_TXN_STATE)", kerr.ErrorForCode(p.ErrorCode))
	}
}
