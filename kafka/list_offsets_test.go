package kafka

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceOneBatch appends records with the given timestamps (ms) to
// topic/0 as one batch, compressed with codec.
func (g *sessionRig) produceOneBatch(topic string, codec kgo.CompressionCodec, stamps ...int64) {
	g.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.s.Addr().String()), kgo.ManualFlushing(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec))
	if err != nil {
		g.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	errs := make(chan error, len(stamps))
	for _, ms := range stamps {
		r := &kgo.Record{Topic: topic, Value: bytes.Repeat([]byte("compressible "), 40), Timestamp: time.UnixMilli(ms)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) { errs <- err })
	}
	if err := cl.Flush(ctx); err != nil {
		g.t.Fatal(err)
	}
	for range stamps {
		if err := <-errs; err != nil {
			g.t.Fatal(err)
		}
	}
}

// listOffset sends a raw ListOffsets v7 for topic/0 at ts.
func (g *sessionRig) listOffset(topic string, ts int64) (offset, timestamp int64) {
	g.t.Helper()
	p := g.listOffsetAt(topic, 7, ts)
	if p.ErrorCode != 0 {
		g.t.Fatalf("ListOffsets %s at %d: error %d", topic, ts, p.ErrorCode)
	}
	return p.Offset, p.Timestamp
}

// listOffsetAt sends a raw ListOffsets at version v for topic/0 at ts and
// returns the partition's answer.
func (g *sessionRig) listOffsetAt(topic string, v int16, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	g.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(v)
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	g.corr++
	g.c.send(g.corr, req)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	resp.SetVersion(req.Version)
	g.c.recv(resp)
	return resp.Topics[0].Partitions[0]
}

// ListOffsets by timestamp answers per record, as Kafka does: the first
// record at or after the target in the first batch whose max timestamp
// is, and -3 the first record carrying the largest timestamp; compressed
// batches are decompressed to find it, for every codec.
func TestListOffsetsPerRecord(t *testing.T) {
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
		id    resolver.Codec
	}{
		{"none", kgo.NoCompression(), 0}, {"gzip", kgo.GzipCompression(), 1},
		{"snappy", kgo.SnappyCompression(), 2}, {"lz4", kgo.Lz4Compression(), 3},
		{"zstd", kgo.ZstdCompression(), 4},
	}
	topics := map[string]int32{}
	for _, c := range codecs {
		topics[c.name] = 1
	}
	g := newSessionRig(t, Config{}, topics)
	adm := kadm.NewClient(g.prod)
	for _, c := range codecs {
		// One batch: offsets 0-2 at 1000/3000/2000, then one at 4000.
		g.produceOneBatch(c.name, c.codec, 1000, 3000, 2000)
		g.produceOneBatch(c.name, c.codec, 4000)
		p := onlyPartition(t, g.fetch(fetchReq(0, -1, parts(c.name, 1), nil)))
		bs := batchesOf(t, p.RecordBatches)
		if len(bs) != 2 {
			t.Fatalf("%s: stored %d batches, want 2", c.name, len(bs))
		}
		if got, _ := resolver.BatchCodec(bs[0]); got != c.id {
			t.Fatalf("%s: the first batch has codec %s", c.name, got)
		}
		for _, tc := range []struct{ at, off, ts int64 }{
			{0, 0, 1000}, {1000, 0, 1000}, {1500, 1, 3000}, {2500, 1, 3000},
			{3000, 1, 3000}, {3001, 3, 4000}, {4001, -1, -1}, {-3, 3, 4000},
		} {
			if off, ts := g.listOffset(c.name, tc.at); off != tc.off || ts != tc.ts {
				t.Errorf("%s at %d: offset %d timestamp %d, want %d at %d", c.name, tc.at, off, ts, tc.off, tc.ts)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		listed, err := adm.ListOffsetsAfterMilli(ctx, 1500, c.name)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if lo, ok := listed.Lookup(c.name, 0); !ok || lo.Err != nil || lo.Offset != 1 || lo.Timestamp != 3000 {
			t.Errorf("%s: kadm after 1500: %+v, want offset 1 at 3000", c.name, lo)
		}
	}
}

// -3 returns the first record carrying the largest timestamp, inside its
// batch.
func TestListOffsetsMaxTimestampRecord(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"mx": 1})
	g.produceOneBatch("mx", kgo.GzipCompression(), 1000, 5000, 2000, 5000)
	g.produceOneBatch("mx", kgo.NoCompression(), 3000)
	if off, ts := g.listOffset("mx", -3); off != 1 || ts != 5000 {
		t.Fatalf("-3: offset %d at %d, want 1 at 5000", off, ts)
	}
}

// A special timestamp is served from the version that introduced it
// (-3 v7, -4 v8, -5 v9, -6 v11, past our maximum) and is
// UNSUPPORTED_VERSION below it; an answer that finds no offset has leader
// epoch -1. Both as Apache Kafka 4.4 answers (test/kafkadiff).
func TestListOffsetsSpecialTimestampVersions(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"sp": 1})
	g.produceOneBatch("sp", kgo.NoCompression(), 1000)
	for _, tc := range []struct {
		v     int16
		ts    int64
		code  int16
		epoch int32
	}{
		{6, -3, kerr.UnsupportedVersion.Code, -1}, {7, -3, 0, 0},
		{7, -4, kerr.UnsupportedVersion.Code, -1}, {8, -4, 0, 0},
		{8, -5, kerr.UnsupportedVersion.Code, -1}, {9, -5, 0, -1}, // no tiered offset: -1
		{9, -6, kerr.UnsupportedVersion.Code, -1},
		{9, 5000, 0, -1}, // after every record: none found
		{9, 500, 0, 0},
	} {
		p := g.listOffsetAt("sp", tc.v, tc.ts)
		if p.ErrorCode != tc.code || p.LeaderEpoch != tc.epoch {
			t.Errorf("v%d at %d: error %d leader epoch %d, want %d and %d", tc.v, tc.ts, p.ErrorCode, p.LeaderEpoch, tc.code, tc.epoch)
		}
		if tc.code != 0 && (p.Offset != -1 || p.Timestamp != -1) {
			t.Errorf("v%d at %d: offset %d timestamp %d, want -1 and -1", tc.v, tc.ts, p.Offset, p.Timestamp)
		}
	}
}
