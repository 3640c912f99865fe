package resolver

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// kv is one record of a keyed test batch: a nil key is a null key, a nil
// value (with tomb) a tombstone.
type kv struct {
	key   []byte
	value []byte
	tomb  bool
	ts    int64
}

func rec(k, v string, ts int64) kv  { return kv{key: []byte(k), value: []byte(v), ts: ts} }
func tomb(k string, ts int64) kv    { return kv{key: []byte(k), tomb: true, ts: ts} }
func keyless(v string, ts int64) kv { return kv{value: []byte(v), ts: ts} }

// kvBatch hand-encodes an uncompressed v2 batch of recs (no kmsg, see
// TestLayering), not idempotent.
func kvBatch(recs ...kv) []byte { return kvBatchIdem(-1, -1, -1, recs...) }

// kvBatchIdem is kvBatch for an idempotent producer.
func kvBatchIdem(pid int64, epoch int16, seq int32, recs ...kv) []byte {
	var sec []byte
	baseTS, maxTS := recs[0].ts, recs[0].ts
	for i, r := range recs {
		maxTS = max(maxTS, r.ts)
		var body []byte
		body = append(body, 0)
		body = binary.AppendVarint(body, r.ts-baseTS)
		body = binary.AppendVarint(body, int64(i))
		if r.key == nil {
			body = binary.AppendVarint(body, -1)
		} else {
			body = binary.AppendVarint(body, int64(len(r.key)))
			body = append(body, r.key...)
		}
		if r.tomb {
			body = binary.AppendVarint(body, -1)
		} else {
			body = binary.AppendVarint(body, int64(len(r.value)))
			body = append(body, r.value...)
		}
		body = binary.AppendVarint(body, 0)
		sec = binary.AppendVarint(sec, int64(len(body)))
		sec = append(sec, body...)
	}
	be := binary.BigEndian
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(sec))
	be.PutUint32(b[8:], uint32(batchHeaderLen-12+len(sec)))
	be.PutUint32(b[12:], 0xffffffff)
	b[16] = 2
	be.PutUint32(b[23:], uint32(len(recs)-1))
	be.PutUint64(b[27:], uint64(baseTS))
	be.PutUint64(b[35:], uint64(maxTS))
	be.PutUint64(b[43:], uint64(pid))
	be.PutUint16(b[51:], uint16(epoch))
	be.PutUint32(b[53:], uint32(seq))
	be.PutUint32(b[57:], uint32(len(recs)))
	b = append(b, sec...)
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// withCodec recompresses an uncompressed test batch's records with c.
func withCodec(t testing.TB, b []byte, c Codec) []byte {
	t.Helper()
	sec, err := compressSection(c, b[batchHeaderLen:])
	if err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte(nil), b[:batchHeaderLen]...), sec...)
	be := binary.BigEndian
	be.PutUint32(out[8:], uint32(batchHeaderLen-12+len(sec)))
	be.PutUint16(out[21:], be.Uint16(out[21:])|uint16(c))
	be.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// rollPartition seals the partition's open ledger, so that all of it is
// cleanable.
func rollPartition(t testing.TB, g *gateway, topic string) {
	t.Helper()
	p, err := g.r.mu.partition(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	ml, _, err := p.ledgerAndSettings()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ml.Roll(); err != nil {
		t.Fatal(err)
	}
}
