package kafka

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// plainBatch encodes an uncompressed, non-idempotent batch of n records;
// keyless says which have a null key.
func plainBatch(n int, keyless func(int) bool) []byte {
	var recs []byte
	for i := range n {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Value: fmt.Appendf(nil, "v%d", i)}
		if !keyless(i) {
			r.Key = fmt.Appendf(nil, "k%d", i)
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the zero length took one byte
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(n - 1), FirstTimestamp: 1, MaxTimestamp: int64(n),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: recs, PartitionLeaderEpoch: -1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// A batch refused for some of its records (KIP-467) is answered as Kafka
// 4.4 answers it (checked against a real broker): the whole batch fails
// with INVALID_RECORD and nothing is appended; from v8 every refused
// record is listed by its index in the batch with its message, and the
// partition's message counts them and shows the first three; the log
// start is reported.
func TestProduceRecordErrors(t *testing.T) {
	g := newSessionRig(t, Config{}, nil)
	if _, err := g.s.cfg.Resolver.CreateTopic("compacted", 1, 1, map[string]string{"cleanup.policy": "compact"}, false); err != nil {
		t.Fatal(err)
	}
	keyless := func(i int) bool { return i%10 == 5 }
	for _, v := range []int16{7, 8, 9, 12} {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(v)
		req.Acks, req.TimeoutMillis = -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "compacted"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = plainBatch(100, keyless)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		p := ask(g.c, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if p.ErrorCode != kerr.InvalidRecord.Code || p.BaseOffset != -1 || p.LogStartOffset != 0 {
			t.Fatalf("v%d: code %d base %d log start %d", v, p.ErrorCode, p.BaseOffset, p.LogStartOffset)
		}
		if v < 8 {
			if len(p.ErrorRecords) != 0 || p.ErrorMessage != nil {
				t.Fatalf("v%d carries record errors or a message", v)
			}
			continue
		}
		if len(p.ErrorRecords) != 10 {
			t.Fatalf("v%d: %d record errors, want 10", v, len(p.ErrorRecords))
		}
		for i, e := range p.ErrorRecords {
			want := "Compacted topic cannot accept message without key in topic partition compacted-0"
			if e.RelativeOffset != int32(10*i+5) || e.ErrorMessage == nil || *e.ErrorMessage != want {
				t.Fatalf("v%d: record error %d: index %d message %v", v, i, e.RelativeOffset, e.ErrorMessage)
			}
		}
		wantMsg := "One or more records have been rejected due to 10 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=5, message='Compacted"
		if p.ErrorMessage == nil || !strings.HasPrefix(*p.ErrorMessage, wantMsg) || strings.Count(*p.ErrorMessage, "RecordError(") != 3 {
			t.Fatalf("v%d: message %v", v, p.ErrorMessage)
		}
	}
	// Nothing of any refused batch was appended.
	p := onlyPartition(t, g.fetch(fetchReq(0, -1, []fetchPart{{topic: "compacted"}}, nil)))
	if p.HighWatermark != 0 {
		t.Fatalf("high watermark %d after refused batches", p.HighWatermark)
	}
}
