package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnRecords is one batch of values at timestamp ts, transactional from
// (pid, epoch) at seq when pid >= 0, plain otherwise.
func txnRecords(ts int64, pid int64, epoch int16, seq int32, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(values) - 1), FirstTimestamp: ts, MaxTimestamp: ts,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(values)), Records: recs}
	if pid >= 0 {
		b.Attributes = 0x10
		b.ProducerID, b.ProducerEpoch, b.FirstSequence = pid, epoch, seq
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// consumeValues reads topic from the start with a franz-go consumer at the
// isolation level until it has n values.
func consumeValues(t *testing.T, addr, topic string, iso kgo.IsolationLevel, n int) ([]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return got, fmt.Errorf("consumed %v, want %d values: %w", got, n, err)
		}
		if err := fs.Err(); err != nil {
			return got, err
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got, nil
}

// read_committed through the wire (the read_committed bound, the LSO): Fetch carries the LSO
// and the aborted transactions, ListOffsets "latest" is the LSO, franz-go's
// read_committed consumer never sees an aborted record and skips the
// markers, and DescribeProducers reports the open transaction.
func TestReadCommittedTransactions(t *testing.T) {
	res := openResolver(t)
	if _, err := res.CreateTopic("tx", 1, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, Config{Resolver: res})
	addr := s.Addr().String()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	produce := func(b []byte) {
		t.Helper()
		_, err := res.Produce("tx", 0, b)
		must(err)
	}
	must(res.AddTxnPartition("tx", 0, 100, 0))
	must(res.AddTxnPartition("tx", 0, 101, 0))
	produce(txnRecords(1000, -1, -1, -1, "p0"))         // 0
	produce(txnRecords(1000, 100, 0, 0, "a1", "a2"))    // 1-2
	produce(txnRecords(2000, 101, 0, 0, "c1"))          // 3
	produce(txnRecords(2000, -1, -1, -1, "p1"))         // 4
	must(res.WriteTxnMarker("tx", 0, 100, 0, false, 5)) // 5
	produce(txnRecords(2000, 101, 0, 1, "c2"))          // 6

	acl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	must(err)
	adm := kadm.NewClient(acl)
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	lso, err := adm.ListCommittedOffsets(ctx, "tx")
	must(err)
	end, err := adm.ListEndOffsets(ctx, "tx")
	must(err)
	if o, _ := lso.Lookup("tx", 0); o.Offset != 3 {
		t.Fatalf("read_committed latest %+v, want the LSO 3", o)
	}
	if o, _ := end.Lookup("tx", 0); o.Offset != 7 {
		t.Fatalf("read_uncommitted latest %+v, want 7", o)
	}
	dp, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"tx": {0: {}}})
	must(err)
	ps := dp["tx"].Partitions[0]
	if ps.Err != nil || ps.ActiveProducers[101].CurrentTxnStartOffset != 3 || ps.ActiveProducers[100].CurrentTxnStartOffset != -1 ||
		ps.ActiveProducers[100].CoordinatorEpoch != 5 || ps.ActiveProducers[101].LastSequence != 1 {
		t.Fatalf("described producers %+v", ps)
	}

	// A raw read_committed Fetch from the aborted transaction's start.
	g := &sessionRig{t: t, s: s, c: dialRaw(t, s.Addr())}
	for _, iso := range []int8{0, 1} {
		req := fetchReq(0, -1, []fetchPart{{"tx", 0, 1}}, nil)
		req.IsolationLevel = iso
		p := g.fetch(req).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LastStableOffset != 3 || p.HighWatermark != 7 {
			t.Fatalf("isolation %d: %+v", iso, p)
		}
		var got [][2]int64
		for _, a := range p.AbortedTransactions {
			got = append(got, [2]int64{a.ProducerID, a.FirstOffset})
		}
		var want [][2]int64
		if iso == 1 {
			want = [][2]int64{{100, 1}}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("isolation %d: aborted %v, want %v", iso, got, want)
		}
	}

	// Timestamp lookups under read_committed answer only below the LSO.
	for _, tc := range []struct {
		iso  int8
		want int64
	}{{0, 3}, {1, -1}} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.SetVersion(7)
		req.ReplicaID, req.IsolationLevel = -1, tc.iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "tx"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = 2000 // the first record at it is c1, at the LSO
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		g.corr++
		g.c.send(g.corr, req)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		resp.SetVersion(7)
		g.c.recv(resp)
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != tc.want {
			t.Fatalf("isolation %d: timestamp lookup %+v, want offset %d", tc.iso, p, tc.want)
		}
	}

	// A read_committed long poll at the LSO (an hour's wait, min bytes 1)
	// is answered when the COMMIT marker alone is durable.
	req := fetchReq(0, -1, []fetchPart{{"tx", 0, 3}}, nil)
	req.IsolationLevel, req.MaxWaitMillis, req.MinBytes = 1, int32(time.Hour/time.Millisecond), 1
	g.corr++
	g.c.send(g.corr, req)
	waitFor(t, "the long poll in flight", func() bool { return s.handling.Load() == 1 })
	must(res.WriteTxnMarker("tx", 0, 101, 0, true, 5)) // 7
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(req.Version)
	g.c.recv(resp)
	if p := resp.Topics[0].Partitions[0]; p.LastStableOffset != 8 || len(p.RecordBatches) == 0 {
		t.Fatalf("long poll answered %+v", p)
	}
	produce(txnRecords(2000, -1, -1, -1, "p2")) // 8
	if got, err := consumeValues(t, addr, "tx", kgo.ReadCommitted(), 5); err != nil || !slices.Equal(got, []string{"p0", "c1", "p1", "c2", "p2"}) {
		t.Fatalf("read_committed consumed %v (%v)", got, err)
	}
	if got, err := consumeValues(t, addr, "tx", kgo.ReadUncommitted(), 7); err != nil || !slices.Equal(got, []string{"p0", "a1", "a2", "c1", "p1", "c2", "p2"}) {
		t.Fatalf("read_uncommitted consumed %v (%v)", got, err)
	}
	if lso, err := adm.ListCommittedOffsets(ctx, "tx"); err != nil {
		t.Fatal(err)
	} else if o, _ := lso.Lookup("tx", 0); o.Offset != 9 {
		t.Fatalf("read_committed latest after the commit %+v, want 9", o)
	}
	// Kafka's DescribeProducers of an unknown partition.
	dp, err = adm.DescribeProducers(ctx, kadm.TopicsSet{"tx": {3: {}}})
	if err == nil && dp["tx"].Partitions[3].Err == nil {
		t.Fatalf("unknown partition described: %+v", dp)
	}
}

// A transactional batch for a partition not in its producer's transaction
// is INVALID_TXN_STATE up to Produce v10 and TRANSACTION_ABORTABLE from
// v11 (KIP-890), as Apache Kafka 4.4 answers (test/kafkadiff).
func TestProduceTxnAbortable(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"t": 1})
	c := dialRaw(t, g.s.Addr())
	for _, tc := range []struct {
		version int16
		want    int16
	}{{9, kerr.InvalidTxnState.Code}, {10, kerr.InvalidTxnState.Code}, {11, kerr.TransactionAbortable.Code}} {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(tc.version)
		id := "tx"
		req.TransactionID, req.Acks, req.TimeoutMillis = &id, -1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 0, txnRecords(1, 42, 0, 0, "v")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if code := ask(c, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != tc.want {
			t.Errorf("Produce v%d: error %d, want %d", tc.version, code, tc.want)
		}
	}
}
