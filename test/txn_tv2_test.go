package test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Transaction version 2 (KIP-890 part 2, transaction version 2) with
// franz-go, which runs it once ApiVersions finalizes transaction.version 2.

// addsCounter counts the AddPartitionsToTxn and AddOffsetsToTxn requests
// a client writes: none at transaction version 2.
type addsCounter struct{ n atomic.Int64 }

func (c *addsCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if key == int16(kmsg.AddPartitionsToTxn) || key == int16(kmsg.AddOffsetsToTxn) {
		c.n.Add(1)
	}
}

var _ kgo.HookBrokerWrite = (*addsCounter)(nil)

func producerOf(t *testing.T, cl *kgo.Client) (int64, int16) {
	t.Helper()
	pid, epoch, err := cl.ProducerID(testCtx(t))
	if err != nil {
		t.Fatalf("producer id: %v", err)
	}
	return pid, epoch
}

// produceTxnRaw sends one transactional batch at Produce v12.
func produceTxnRaw(t *testing.T, cl *kgo.Client, txnID, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis, req.TransactionID = 12, -1, 10_000, &txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.ProduceResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

// lastStable is ListOffsets latest under read_committed: the LSO.
func lastStable(t *testing.T, cl *kgo.Client, topic string, partition int32) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = partition, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := request[*kmsg.ListOffsetsResponse](t, cl, req).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("list offsets: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	return p.Offset
}

// waitTxnComplete waits until id's transaction is complete
// (DescribeTransactions: CompleteCommit or CompleteAbort), as a client of
// Apache Kafka, which answers EndTxn before its markers, waits.
func waitTxnComplete(t *testing.T, g *gateway, id string) {
	t.Helper()
	ctx := testCtx(t)
	for {
		d, err := g.admin().DescribeTransactions(ctx, id)
		if err == nil && (d[id].State == "CompleteCommit" || d[id].State == "CompleteAbort") {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never complete: %+v %v", id, d, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// KIP-890 implicit adds, the epoch bump at EndTxn: franz-go runs transaction version 2: no AddPartitionsToTxn
// or AddOffsetsToTxn is sent, every EndTxn bumps the epoch, and a late
// produce with the epoch before the bump is refused (the zombie is
// fenced) without holding back the LSO; the producer carries on.
func TestTxnTV2EpochBumpFencesLateProduce(t *testing.T) {
	g := newGateway(t)
	g.createTopic("late", 2)
	adds := new(addsCounter)
	cl := g.txnProducer("late-id", kgo.WithHooks(adds))
	ctx := testCtx(t)
	// franz-go opts in at BeginTransaction if it already knows the
	// broker's features.
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var pid int64
	var epoch int16
	for i, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produceTxn(t, cl, "late", values(string(rune('a'+i)), 4)...)
		p, e := producerOf(t, cl)
		if i > 0 && (p != pid || e != epoch+1) {
			t.Fatalf("transaction %d runs at %d/%d, want %d/%d: the epoch was not bumped", i, p, e, pid, epoch+1)
		}
		pid, epoch = p, e
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatalf("end %d: %v", i, err)
		}
	}
	if n := adds.n.Load(); n != 0 {
		t.Fatalf("%d AddPartitionsToTxn/AddOffsetsToTxn requests at transaction version 2", n)
	}
	raw := g.client()
	// EndTxn answers once the decision is durable, its markers after it
	// (answer once decided): the high watermark counts them once the
	// transaction is complete.
	waitTxnComplete(t, g, "late-id")
	hw := listOffset(t, raw, "late", -1).Offset
	// The zombie: the last transaction's producer, one epoch back.
	if p := produceTxnRaw(t, raw, "late-id", "late", 0, txnBatch(batchSpec{records: 1, pid: pid, epoch: epoch, seq: 100, baseTime: time.Now().UnixMilli()})); p.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("late produce with the pre-bump epoch: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(p.ErrorCode))
	}
	if lso, end := lastStable(t, raw, "late", 0), listOffset(t, raw, "late", -1).Offset; lso != end || end != hw {
		t.Fatalf("after the late produce: LSO %d, high watermark %d (was %d)", lso, end, hw)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, "late", values("d", 2)...)
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after the late produce: %v", err)
	}
	got := withoutPartition(consumeAll(t, g, "late", true))
	if len(got) != 10 || got["b-0"] != 0 || got["raw value 0"] != 0 || got["d-1"] != 1 {
		t.Fatalf("read_committed: %v", got)
	}
}

// A transaction's version: a client capped below transaction version 2 (Produce v11, EndTxn
// v4, TxnOffsetCommit v4) is served as before: explicit adds, one epoch
// for all its transactions, commits and aborts isolated.
func TestTxnTV1ClientStillServed(t *testing.T) {
	g := newGateway(t)
	g.createTopic("v1", 2)
	adds := new(addsCounter)
	cl := g.txnProducer("v1-id", kgo.MaxVersions(kversion.V3_9_0()), kgo.WithHooks(adds))
	ctx := testCtx(t)
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var epoch int16 = -1
	for i, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produceTxn(t, cl, "v1", values(string(rune('a'+i)), 4)...)
		_, e := producerOf(t, cl)
		if i > 0 && e != epoch {
			t.Fatalf("transaction %d at epoch %d, want %d: a version-1 client's epoch moved", i, e, epoch)
		}
		epoch = e
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatalf("end %d: %v", i, err)
		}
	}
	if adds.n.Load() == 0 {
		t.Fatal("no AddPartitionsToTxn: the client ran transaction version 2")
	}
	got := withoutPartition(consumeAll(t, g, "v1", true))
	if len(got) != 8 || got["b-0"] != 0 || got["c-3"] != 1 {
		t.Fatalf("read_committed: %v", got)
	}
}
