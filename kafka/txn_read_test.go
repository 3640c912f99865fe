package kafka

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnRecords is one batch of values, transactional from (pid, epoch) at
// seq when pid >= 0, plain otherwise.
func txnRecords(pid int64, epoch int16, seq int32, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(values) - 1), FirstTimestamp: 1000, MaxTimestamp: 1000,
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
// isolation level until it has want's length in values.
func consumeValues(t *testing.T, addr, topic string, iso kgo.IsolationLevel, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %v, want %d values: %v", got, n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// read_committed through the wire (resolver X1, X2): Fetch carries the LSO
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
	produce(txnRecords(-1, -1, -1, "p0"))               // 0
	produce(txnRecords(100, 0, 0, "a1", "a2"))          // 1-2
	produce(txnRecords(101, 0, 0, "c1"))                // 3
	produce(txnRecords(-1, -1, -1, "p1"))               // 4
	must(res.WriteTxnMarker("tx", 0, 100, 0, false, 5)) // 5
	produce(txnRecords(101, 0, 1, "c2"))                // 6

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

	must(res.WriteTxnMarker("tx", 0, 101, 0, true, 5)) // 7
	produce(txnRecords(-1, -1, -1, "p2"))              // 8
	if got, want := consumeValues(t, addr, "tx", kgo.ReadCommitted(), 5), []string{"p0", "c1", "p1", "c2", "p2"}; !slices.Equal(got, want) {
		t.Fatalf("read_committed consumed %v, want %v", got, want)
	}
	if got, want := consumeValues(t, addr, "tx", kgo.ReadUncommitted(), 7), []string{"p0", "a1", "a2", "c1", "p1", "c2", "p2"}; !slices.Equal(got, want) {
		t.Fatalf("read_uncommitted consumed %v, want %v", got, want)
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
