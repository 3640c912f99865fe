package kafkadiff

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BaseTimestamp is the CreateTime of the corpus's first record; record i
// of a batch has the batch's first timestamp plus TimestampStep*i. It is
// an hour before the run starts, whole seconds: recent enough that no
// broker's time-based retention (a week by default) deletes the corpus's
// records under it, and far enough from the brokers' clocks during the
// run that normalisation tells them apart: a timestamp within
// RecordWindow of it is compared (relative to it), any other clock
// reading is a placeholder.
var BaseTimestamp = time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()

// RecordWindow bounds the record timestamps the corpus sets around
// BaseTimestamp.
const RecordWindow = 10 * 60 * 1000

// TimestampStep separates a batch's records' timestamps.
const TimestampStep = 1000

// Rec is one record to produce.
type Rec struct {
	Key, Value []byte
	Headers    []kmsg.Header
}

// Batch describes a v2 record batch to build.
type Batch struct {
	Records       []Rec
	FirstTS       int64 // 0: BaseTimestamp
	Idempotent    bool  // ProducerID, ProducerEpoch and FirstSequence are set
	ProducerID    int64
	ProducerEpoch int16
	FirstSequence int32
	Transactional bool // implies Idempotent
	Zstd          bool // compress the records with zstd
	LogAppendTime bool // the timestamp-type bit only a broker sets
}

// Bytes encodes the batch (magic 2, CRC-32C over attributes onwards).
func (b Batch) Bytes() []byte {
	first := b.FirstTS
	if first == 0 {
		first = BaseTimestamp
	}
	var recs []byte
	for i, r := range b.Records {
		recs = appendRecord(recs, int32(i), int64(i)*TimestampStep, r)
	}
	var attrs int16
	if b.Transactional {
		attrs |= 0x10
	}
	if b.LogAppendTime {
		attrs |= 0x08
	}
	if b.Zstd {
		attrs |= 4
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		recs = enc.EncodeAll(recs, nil)
		enc.Close()
	}
	pid, epoch, seq := b.ProducerID, b.ProducerEpoch, b.FirstSequence
	if !b.Idempotent && !b.Transactional {
		pid, epoch, seq = -1, -1, -1
	}
	n := int32(len(b.Records))
	rb := kmsg.RecordBatch{
		FirstOffset:          0,
		Length:               int32(49 + len(recs)),
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      n - 1,
		FirstTimestamp:       first,
		MaxTimestamp:         first + int64(n-1)*TimestampStep,
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		FirstSequence:        seq,
		NumRecords:           n,
		Records:              recs,
	}
	raw := rb.AppendTo(nil)
	crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(raw[17:21], crc)
	return raw
}

func appendRecord(dst []byte, offDelta int32, tsDelta int64, r Rec) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, int64(offDelta))
	body = appendVarBytes(body, r.Key)
	body = appendVarBytes(body, r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = appendVarBytes(body, []byte(h.Key))
		body = appendVarBytes(body, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// Recs makes n records with values prefix-0, prefix-1, ... and no keys.
func Recs(prefix string, n int) []Rec {
	out := make([]Rec, n)
	for i := range out {
		out[i] = Rec{Value: []byte(prefix + "-" + itoa(i))}
	}
	return out
}

// BigRec is one record whose value is size bytes.
func BigRec(size int) Rec { return Rec{Value: bytes.Repeat([]byte{'x'}, size)} }

func itoa(i int) string { return strconv.Itoa(i) }

// decodedBatch is a fetched record batch as normalisation compares it.
type decodedBatch struct {
	FirstOffset     int64
	LastOffsetDelta int32
	Attributes      int16
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	FirstSequence   int32
	NumRecords      int32
	Records         []decodedRecord
	Partial         bool // the bytes end inside this batch
}

type decodedRecord struct {
	OffsetDelta    int32
	TimestampDelta int64
	Key, Value     string
	Headers        []kmsg.Header
}

// decodeBatches splits fetched record bytes into batches; a trailing
// partial batch (a broker may cut the last one at the byte limit) is kept
// as Partial. Compressed zstd batches are decompressed; other codecs keep
// only their header fields.
func decodeBatches(raw []byte) []decodedBatch {
	var out []decodedBatch
	for len(raw) > 0 {
		if len(raw) < 61 {
			out = append(out, decodedBatch{Partial: true})
			break
		}
		length := int(int32(binary.BigEndian.Uint32(raw[8:12])))
		if length+12 > len(raw) || length < 49 {
			out = append(out, decodedBatch{Partial: true})
			break
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw[:12+length]); err != nil {
			out = append(out, decodedBatch{Partial: true})
			break
		}
		raw = raw[12+length:]
		d := decodedBatch{
			FirstOffset: rb.FirstOffset, LastOffsetDelta: rb.LastOffsetDelta, Attributes: rb.Attributes,
			FirstTimestamp: rb.FirstTimestamp, MaxTimestamp: rb.MaxTimestamp, ProducerID: rb.ProducerID,
			ProducerEpoch: rb.ProducerEpoch, FirstSequence: rb.FirstSequence, NumRecords: rb.NumRecords,
		}
		recs := rb.Records
		switch rb.Attributes & 7 {
		case 0:
		case 4:
			dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
			recs, _ = dec.DecodeAll(recs, nil)
			dec.Close()
		default:
			recs = nil
		}
		for len(recs) > 0 {
			l, n := binary.Varint(recs)
			if n <= 0 || int(l)+n > len(recs) {
				break
			}
			var r kmsg.Record
			if r.ReadFrom(recs[:n+int(l)]) != nil {
				break
			}
			recs = recs[n+int(l):]
			d.Records = append(d.Records, decodedRecord{OffsetDelta: r.OffsetDelta, TimestampDelta: r.TimestampDelta64,
				Key: string(r.Key), Value: shorten(r.Value), Headers: r.Headers})
		}
		out = append(out, d)
	}
	return out
}

// shorten keeps long values comparable without printing them whole.
func shorten(v []byte) string {
	if len(v) <= 64 {
		return string(v)
	}
	return string(v[:16]) + "...(" + itoa(len(v)) + " bytes)"
}
