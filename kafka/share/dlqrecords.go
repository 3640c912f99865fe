package share

// The record format the DLQ writer reads and writes (Kafka's record batch,
// magic 2), in the few lines it needs: kafka/ reaches the batch format
// only through the resolver, whose decompression DeadLetterLog hands in.

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// dlqRecord is one record: its offset (absolute when read, the delta when
// written), key and value (nil: null) and headers as encoded (count,
// then each key and value).
type dlqRecord struct {
	off        int64
	key, value []byte
	headers    []byte
}

var errShortRecord = errors.New("share: short record")

// Batch header fields (magic 2) beyond those partition.go reads.
const (
	batchLengthAt   = 8
	batchMagicAt    = 16
	batchCRCAt      = 17
	batchAttrsAt    = 21
	batchLastDelta  = 23
	batchBaseTSAt   = 27
	batchMaxTSAt    = 35
	batchEpochAt    = 51
	batchBaseSeqAt  = 53
	batchCountAt    = 57
	batchCodecMask  = 0x07
	batchLenPrefix  = 12
	batchControlBit = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// parseRecords parses the uncompressed records section sec of a batch
// whose base offset is base.
func parseRecords(sec []byte, base int64) ([]dlqRecord, error) {
	var out []dlqRecord
	for len(sec) > 0 {
		size, n := binary.Varint(sec)
		if n <= 0 || size < 1 || size > int64(len(sec)-n) {
			return out, errShortRecord
		}
		rec := sec[n : n+int(size)]
		sec = sec[n+int(size):]
		q := 1 // attributes
		if _, m := binary.Varint(rec[q:]); m > 0 {
			q += m // timestamp delta
		} else {
			return out, errShortRecord
		}
		od, m := binary.Varint(rec[q:])
		if m <= 0 {
			return out, errShortRecord
		}
		q += m
		r := dlqRecord{off: base + od}
		var ok bool
		if r.key, q, ok = nullable(rec, q); !ok {
			return out, errShortRecord
		}
		if r.value, q, ok = nullable(rec, q); !ok {
			return out, errShortRecord
		}
		r.headers = rec[q:]
		out = append(out, r)
	}
	return out, nil
}

func nullable(b []byte, p int) ([]byte, int, bool) {
	l, n := binary.Varint(b[p:])
	switch {
	case n <= 0 || l < -1 || l > int64(len(b)-p-n):
		return nil, 0, false
	case l == -1:
		return nil, p + n, true
	}
	p += n
	return b[p : p+int(l) : p+int(l)], p + int(l), true
}

// encodeBatch is recs (offset deltas 0..n-1) as one uncompressed batch
// at timestamp ts, without a producer id (-1, epoch -1, sequence -1).
func encodeBatch(recs []dlqRecord, ts int64) []byte {
	var sec []byte
	for i, r := range recs {
		body := []byte{0}                   // attributes
		body = binary.AppendVarint(body, 0) // timestamp delta
		body = binary.AppendVarint(body, int64(i))
		body = appendNullable(body, r.key)
		body = appendNullable(body, r.value)
		body = append(body, r.headers...)
		sec = binary.AppendVarint(sec, int64(len(body)))
		sec = append(sec, body...)
	}
	be := binary.BigEndian
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(sec))
	be.PutUint32(b[batchLengthAt:], uint32(batchHeaderLen-batchLenPrefix+len(sec)))
	b[batchMagicAt] = 2
	be.PutUint32(b[batchLastDelta:], uint32(len(recs)-1))
	be.PutUint64(b[batchBaseTSAt:], uint64(ts))
	be.PutUint64(b[batchMaxTSAt:], uint64(ts))
	be.PutUint64(b[producerIDAt:], ^uint64(0))
	be.PutUint16(b[batchEpochAt:], ^uint16(0))
	be.PutUint32(b[batchBaseSeqAt:], ^uint32(0))
	be.PutUint32(b[batchCountAt:], uint32(len(recs)))
	b = append(b, sec...)
	be.PutUint32(b[batchCRCAt:], crc32.Checksum(b[batchAttrsAt:], castagnoli))
	return b
}

func appendNullable(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}
