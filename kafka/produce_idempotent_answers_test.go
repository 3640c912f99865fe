package kafka

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// idemBatch encodes an uncompressed idempotent batch of n records of
// producer pid at epoch from sequence seq, its timestamps ts..ts+n-1.
func idemBatch(pid int64, epoch int16, seq int32, n int, ts int64) []byte {
	var recs []byte
	for i := range n {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Value: fmt.Appendf(nil, "v%d", i)}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the zero length took one byte
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(n - 1), FirstTimestamp: ts, MaxTimestamp: ts + int64(n-1),
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: int32(n), Records: recs, PartitionLeaderEpoch: -1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// An idempotent producer's answers as Kafka 4.4 gives them (checked
// against a real broker, test/kafkadiff's produce-idempotent): a
// duplicate batch is answered with the original's offset and, in
// LogAppendTime, the stored batch's max timestamp even on a CreateTime
// topic; a sequence gap and an old epoch carry the log start offset.
func TestProduceIdempotentAnswers(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"idem": 1})
	produce := func(records []byte) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(11)
		req.Acks, req.TimeoutMillis = -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "idem"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = records
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return ask(g.c, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	const pid, ts = 4242, 1_700_000_000_000
	for i, seq := range []int32{0, 3} {
		if p := produce(idemBatch(pid, 0, seq, 3, ts+int64(100*i))); p.ErrorCode != 0 || p.LogAppendTime != -1 {
			t.Fatalf("seq %d: code %d, log append time %d", seq, p.ErrorCode, p.LogAppendTime)
		}
	}
	for i, seq := range []int32{0, 3} {
		p := produce(idemBatch(pid, 0, seq, 3, ts+int64(100*i)))
		if p.ErrorCode != 0 || p.BaseOffset != int64(seq) || p.LogAppendTime != ts+int64(100*i)+2 {
			t.Fatalf("duplicate of seq %d: code %d, base %d, log append time %d, want %d", seq, p.ErrorCode, p.BaseOffset, p.LogAppendTime, ts+int64(100*i)+2)
		}
	}
	if p := produce(idemBatch(pid, 0, 9, 1, ts)); p.ErrorCode != kerr.OutOfOrderSequenceNumber.Code || p.LogStartOffset != 0 {
		t.Fatalf("sequence gap: code %d, log start %d", p.ErrorCode, p.LogStartOffset)
	}
	if p := produce(idemBatch(pid, 1, 0, 1, ts)); p.ErrorCode != 0 {
		t.Fatalf("new epoch: code %d", p.ErrorCode)
	}
	if p := produce(idemBatch(pid, 0, 6, 1, ts)); p.ErrorCode != kerr.InvalidProducerEpoch.Code || p.LogStartOffset != 0 {
		t.Fatalf("old epoch: code %d, log start %d", p.ErrorCode, p.LogStartOffset)
	}
}
