package test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// records makes n records with distinct keys, values, headers and
// timestamps (millisecond precision, as the wire carries them).
func records(topic string, n int) []*kgo.Record {
	base := time.UnixMilli(1_700_000_000_000)
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{
			Topic:     topic,
			Key:       fmt.Appendf(nil, "key-%d", i),
			Value:     bytes.Repeat(fmt.Appendf(nil, "value-%d;", i), 1+i%7),
			Headers:   []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "hv-%d", i)}, {Key: "empty"}},
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}
	}
	return rs
}

// consumeN reads exactly n records from the start of topic.
func consumeN(t *testing.T, g *gateway, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t)
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before the deadline", len(got), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		got = append(got, fs.Records()...)
	}
	if len(got) != n {
		t.Fatalf("consumed %d records, want %d", len(got), n)
	}
	return got
}

// sameRecords checks that got holds want's records (by key), each with its
// key, value, headers and timestamp intact, offsets dense per partition.
func sameRecords(t *testing.T, want, got []*kgo.Record) {
	t.Helper()
	byKey := make(map[string]*kgo.Record, len(got))
	next := map[int32]int64{}
	for _, r := range got {
		byKey[string(r.Key)] = r
		if r.Offset != next[r.Partition] {
			t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
		}
		next[r.Partition]++
	}
	for _, w := range want {
		r, ok := byKey[string(w.Key)]
		switch {
		case !ok:
			t.Fatalf("record %s missing", w.Key)
		case !bytes.Equal(r.Value, w.Value):
			t.Fatalf("record %s: value %q, want %q", w.Key, r.Value, w.Value)
		case !r.Timestamp.Equal(w.Timestamp):
			t.Fatalf("record %s: timestamp %v, want %v", w.Key, r.Timestamp, w.Timestamp)
		case len(r.Headers) != len(w.Headers):
			t.Fatalf("record %s: %d headers, want %d", w.Key, len(r.Headers), len(w.Headers))
		}
		for i, h := range w.Headers {
			if r.Headers[i].Key != h.Key || !bytes.Equal(r.Headers[i].Value, h.Value) {
				t.Fatalf("record %s: header %d = %+v, want %+v", w.Key, i, r.Headers[i], h)
			}
		}
	}
}

// A default (idempotent) franz-go producer and a consumer round-trip
// records through every codec over several partitions.
func TestProduceConsumeEveryCodec(t *testing.T) {
	g := newGateway(t)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			g.createTopic(topic, 3)
			prod := g.client(kgo.ProducerBatchCompression(codec))
			want := records(topic, 60)
			if err := prod.ProduceSync(testCtx(t), want...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			parts := map[int32]bool{}
			for _, r := range want {
				parts[r.Partition] = true
			}
			if len(parts) < 2 {
				t.Fatalf("records went to %d partition(s); want several", len(parts))
			}
			sameRecords(t, want, consumeN(t, g, topic, len(want)))
		})
	}
}

// Metadata that allows it auto-creates a topic with num.partitions
// partitions, and a produce to it works.
func TestAutoCreateOnProduce(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{numPartitions: 2})
	prod := g.client(kgo.AllowAutoTopicCreation())
	want := records("auto-created", 10)
	if err := prod.ProduceSync(testCtx(t), want...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	topics, err := g.admin().ListTopics(testCtx(t), "auto-created")
	if err != nil {
		t.Fatal(err)
	}
	if d := topics["auto-created"]; d.Err != nil || len(d.Partitions) != 2 || d.ID.String() == "" {
		t.Fatalf("auto-created topic: %+v", d)
	}
	sameRecords(t, want, consumeN(t, g, "auto-created", len(want)))
}

// acks=0 gets no response, yet the records land.
func TestAcksZeroProducer(t *testing.T) {
	g := newGateway(t)
	g.createTopic("acks0", 1)
	prod := g.client(kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	want := records("acks0", 25)
	if err := prod.ProduceSync(testCtx(t), want...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	sameRecords(t, want, consumeN(t, g, "acks0", len(want)))
}
