package test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// withCodec returns batch b with its records compressed by enc under codec
// (attributes bits 0-2), its length and CRC32C fixed up.
func withCodec(b []byte, codec int16, records []byte) []byte {
	out := append(append([]byte(nil), b[:61]...), records...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint16(out[21:], binary.BigEndian.Uint16(out[21:])&^7|uint16(codec))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func zstdData(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Produce v3+ validation as Kafka's: a batch marked gzip that is not gzip
// is CORRUPT_MESSAGE, two batches for one partition INVALID_RECORD, and
// nothing of either is appended; a good compressed batch is then stored.
func TestProduceValidatesBatches(t *testing.T) {
	g := newGateway(t)
	g.createTopic("pv", 1)
	cl := g.client()
	good := makeBatch(batchSpec{records: 3, pid: -1, baseTime: 1000})
	notGzip := withCodec(good, 1, good[61:])
	if p := produceRaw(t, cl, "pv", notGzip); p.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("gzip-marked plain records: error %d, want CORRUPT_MESSAGE", p.ErrorCode)
	}
	if p := produceRaw(t, cl, "pv", append(append([]byte(nil), good...), good...)); p.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("two batches: error %d, want INVALID_RECORD", p.ErrorCode)
	}
	if end := listOffset(t, cl, "pv", -1); end.Offset != 0 {
		t.Fatalf("high watermark %d after refused batches", end.Offset)
	}
	zb := withCodec(good, 4, zstdData(t, good[61:]))
	if p := produceRaw(t, cl, "pv", zb); p.ErrorCode != 0 {
		t.Fatalf("zstd batch at Produce v9: error %d", p.ErrorCode)
	}
	got := batchesOf(t, fetchRaw(t, cl, "pv", 0, 0).RecordBatches)
	if len(got) != 1 || got[0].Attributes&7 != 4 || got[0].NumRecords != 3 {
		t.Fatalf("stored %+v", got)
	}
}

// Produce is advertised from v0 (librdkafka compresses only then), but
// v0-v2 are answered UNSUPPORTED_VERSION, as Kafka 4 does; zstd below v7
// is UNSUPPORTED_COMPRESSION_TYPE.
func TestProduceVersions(t *testing.T) {
	g := newGateway(t)
	g.createTopic("pver", 1)
	vers := request[*kmsg.ApiVersionsResponse](t, g.client(), kmsg.NewPtrApiVersionsRequest())
	for _, k := range vers.ApiKeys {
		if k.ApiKey == 0 && (k.MinVersion != 0 || k.MaxVersion != 13) {
			t.Fatalf("Produce advertised as %d-%d, want 0-13", k.MinVersion, k.MaxVersion)
		}
	}
	good := makeBatch(batchSpec{records: 2, pid: -1, baseTime: 1000})
	old := g.client(kgo.MaxVersions(kversion.V0_10_2())) // Produce v2
	if p := produceRaw(t, old, "pver", good); p.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("Produce v2: error %d, want UNSUPPORTED_VERSION", p.ErrorCode)
	}
	v6 := g.client(kgo.MaxVersions(kversion.V2_0_0())) // Produce v6
	zb := withCodec(good, 4, zstdData(t, good[61:]))
	if p := produceRaw(t, v6, "pver", zb); p.ErrorCode != kerr.UnsupportedCompressionType.Code {
		t.Fatalf("zstd at Produce v6: error %d, want UNSUPPORTED_COMPRESSION_TYPE", p.ErrorCode)
	}
	if end := listOffset(t, g.client(), "pver", -1); end.Offset != 0 {
		t.Fatalf("high watermark %d after refused produces", end.Offset)
	}
	if p := produceRaw(t, v6, "pver", good); p.ErrorCode != 0 {
		t.Fatalf("uncompressed at Produce v6: error %d", p.ErrorCode)
	}
}

// Only a broker stamps LogAppendTime. A batch whose producer set that
// timestamp type is INVALID_TIMESTAMP with every record listed on a
// LogAppendTime topic, and nothing of it is appended; on a CreateTime
// topic it is stored as a CreateTime batch with its max timestamp (Kafka
// 4.4's answers, asked in the differential run).
func TestProduceProducerLogAppendTime(t *testing.T) {
	g := newGateway(t)
	g.createTopic("pv-ct", 1)
	g.createTopicWith("pv-lat", map[string]*string{"message.timestamp.type": ptr("LogAppendTime")})
	cl := g.client()
	b := makeBatch(batchSpec{records: 3, pid: -1, baseTime: 1000})
	b = withCodec(b, 0x08, b[61:]) // the timestamp-type bit, no codec
	maxTS := int64(binary.BigEndian.Uint64(b[35:]))
	p := produceRaw(t, cl, "pv-lat", b)
	if p.ErrorCode != kerr.InvalidTimestamp.Code || len(p.ErrorRecords) != 3 {
		t.Fatalf("LogAppendTime topic: error %d with %d record errors, want INVALID_TIMESTAMP with 3", p.ErrorCode, len(p.ErrorRecords))
	}
	if end := listOffset(t, cl, "pv-lat", -1); end.Offset != 0 {
		t.Fatalf("LogAppendTime topic: high watermark %d after a refused batch", end.Offset)
	}
	if p := produceRaw(t, cl, "pv-ct", b); p.ErrorCode != 0 {
		t.Fatalf("CreateTime topic: error %d", p.ErrorCode)
	}
	got := batchesOf(t, fetchRaw(t, cl, "pv-ct", 0, 0).RecordBatches)
	if len(got) != 1 || got[0].Attributes&0x08 != 0 || got[0].MaxTimestamp != maxTS || got[0].NumRecords != 3 {
		t.Fatalf("CreateTime topic: stored %+v, want a CreateTime batch of 3 with max timestamp %d", got, maxTS)
	}
}
