package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/resolver"
)

// rulesBatch encodes a non-idempotent batch of one record per value, the
// i-th stamped first+i ms, its records compressed with c.
func rulesBatch(t *testing.T, first int64, c resolver.Codec, values ...[]byte) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Key: []byte("k"), Value: v}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	sec := recs
	switch c {
	case resolver.CodecZstd:
		e, _ := zstd.NewWriter(nil)
		sec = e.EncodeAll(recs, nil)
	case resolver.CodecGzip:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(recs); err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		sec = buf.Bytes()
	}
	n := len(values)
	b := kmsg.RecordBatch{Magic: 2, Attributes: int16(c), LastOffsetDelta: int32(n - 1), FirstTimestamp: first, MaxTimestamp: first + int64(n-1),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: sec, PartitionLeaderEpoch: -1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func produceOne(g *sessionRig, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(12)
	req.Acks, req.TimeoutMillis = -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return ask(g.c, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// Kafka 4.0's message.timestamp.after.max.ms default (an hour): a batch
// with records more than an hour ahead is INVALID_TIMESTAMP, each such
// record listed (KIP-467), none appended; within the hour it is appended.
// A topic's message.timestamp.before.max.ms bounds records from below the
// same way (KIP-937); a LogAppendTime topic checks neither. (Checked
// against Kafka 4.4 by the kafkadiff case configs-topic-rules.)
func TestProduceTimestampBounds(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	for topic, cfg := range map[string]map[string]string{
		"ts": nil, "ts-before": {"message.timestamp.before.max.ms": "60000"}, "ts-lat": {"message.timestamp.type": "LogAppendTime"},
	} {
		if _, err := g.s.cfg.Resolver.CreateTopic(topic, 1, 1, cfg, false); err != nil {
			t.Fatal(err)
		}
	}
	v := []byte("v")
	now := time.Now().UnixMilli()
	p := produceOne(g, "ts", rulesBatch(t, now+2*time.Hour.Milliseconds(), resolver.CodecNone, v, v, v))
	if p.ErrorCode != kerr.InvalidTimestamp.Code || len(p.ErrorRecords) != 3 || p.BaseOffset != -1 {
		t.Fatalf("two hours ahead: code %d, %d record errors, base %d", p.ErrorCode, len(p.ErrorRecords), p.BaseOffset)
	}
	if p.ErrorMessage == nil || *p.ErrorMessage != "One or more records have been rejected due to invalid timestamp" {
		t.Fatalf("message %v", p.ErrorMessage)
	}
	if p := produceOne(g, "ts", rulesBatch(t, now+30*time.Minute.Milliseconds(), resolver.CodecNone, v)); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("half an hour ahead: code %d base %d", p.ErrorCode, p.BaseOffset)
	}
	if p := produceOne(g, "ts-before", rulesBatch(t, now-time.Hour.Milliseconds(), resolver.CodecGzip, v)); p.ErrorCode != kerr.InvalidTimestamp.Code {
		t.Fatalf("an hour old with before.max.ms a minute: code %d", p.ErrorCode)
	}
	if p := produceOne(g, "ts-lat", rulesBatch(t, now+2*time.Hour.Milliseconds(), resolver.CodecNone, v)); p.ErrorCode != 0 {
		t.Fatalf("LogAppendTime topic: code %d", p.ErrorCode)
	}
}

// max.decompressed.message.bytes bounds each record of a compressed batch
// (the records the broker decompresses): one larger fails the whole batch
// with INVALID_RECORD, no record list, the log start given, as Kafka 4.4's
// decompressing iterator does; the same record uncompressed is appended.
func TestProduceMaxDecompressedRecord(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	if _, err := g.s.cfg.Resolver.CreateTopic("md", 1, 1, map[string]string{"max.decompressed.message.bytes": "100"}, false); err != nil {
		t.Fatal(err)
	}
	now, big := time.Now().UnixMilli(), bytes.Repeat([]byte("x"), 200)
	p := produceOne(g, "md", rulesBatch(t, now, resolver.CodecZstd, []byte("small"), big))
	if p.ErrorCode != kerr.InvalidRecord.Code || len(p.ErrorRecords) != 0 || p.LogStartOffset != 0 || p.BaseOffset != -1 {
		t.Fatalf("compressed 200-byte record: code %d, %d record errors, log start %d", p.ErrorCode, len(p.ErrorRecords), p.LogStartOffset)
	}
	if p := produceOne(g, "md", rulesBatch(t, now, resolver.CodecZstd, []byte("small"))); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("compressed small record: code %d base %d", p.ErrorCode, p.BaseOffset)
	}
	if p := produceOne(g, "md", rulesBatch(t, now, resolver.CodecNone, big)); p.ErrorCode != 0 || p.BaseOffset != 1 {
		t.Fatalf("uncompressed 200-byte record: code %d base %d", p.ErrorCode, p.BaseOffset)
	}
}

// KIP-390: a topic's compression.gzip.level is the level its batches are
// recompressed at: the same compressible batch is stored smaller at level
// 9 than at 1; a level out of Kafka's range is refused.
func TestProduceRecompressLevel(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	sizes := map[string]int{}
	var vals [][]byte
	for i := range 200 {
		vals = append(vals, fmt.Appendf(nil, "record %d of a compressible batch: offset, partition, leader, replica %d", i, i%7))
	}
	batch := rulesBatch(t, time.Now().UnixMilli(), resolver.CodecNone, vals...)
	for _, level := range []string{"1", "9"} {
		topic := "gz" + level
		if _, err := g.s.cfg.Resolver.CreateTopic(topic, 1, 1, map[string]string{"compression.type": "gzip", "compression.gzip.level": level}, false); err != nil {
			t.Fatal(err)
		}
		if p := produceOne(g, topic, batch); p.ErrorCode != 0 {
			t.Fatalf("level %s: code %d", level, p.ErrorCode)
		}
		p := onlyPartition(t, g.fetch(fetchReq(0, -1, []fetchPart{{topic: topic}}, nil)))
		if len(p.RecordBatches) < 23 || p.RecordBatches[22]&7 != byte(resolver.CodecGzip) {
			t.Fatalf("level %s: stored batch not gzip", level)
		}
		sizes[level] = len(p.RecordBatches)
	}
	if sizes["9"] >= sizes["1"] {
		t.Fatalf("gzip level 9 stored %d bytes, level 1 %d: the level is not applied", sizes["9"], sizes["1"])
	}
	if _, err := g.s.cfg.Resolver.CreateTopic("gz0", 1, 1, map[string]string{"compression.gzip.level": "0"}, false); err == nil {
		t.Fatal("compression.gzip.level=0 accepted")
	}
}
