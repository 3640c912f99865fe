package resolver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// rawBatch is a batch header (no CRC: walkRecords does not check it) of
// count records with codec, followed by payload.
func rawBatch(codec int16, count int32, payload []byte) []byte {
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(payload))
	binary.BigEndian.PutUint16(b[attrsOff:], uint16(codec))
	binary.BigEndian.PutUint32(b[lastDeltaOff:], uint32(count-1))
	binary.BigEndian.PutUint32(b[countOff:], uint32(count))
	return append(b, payload...)
}

// A compressed batch that decompresses past maxRecordScanBytes is refused
// as corrupt, having decompressed no more than the bound; a payload that
// is not what its codec says is corrupt too.
func TestWalkRecordsBounded(t *testing.T) {
	// One well-formed record whose key alone is past the bound.
	key := int64(maxRecordScanBytes + (1 << 20))
	head := []byte{0, 0, 0} // attributes, timestamp delta, offset delta
	head = binary.AppendVarint(head, key)
	tail := binary.AppendVarint(nil, -1) // null value
	tail = binary.AppendVarint(tail, 0)  // no headers
	rec := binary.AppendVarint(nil, int64(len(head))+key+int64(len(tail)))
	rec = append(rec, head...)
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(rec)
	zeros := make([]byte, 1<<20)
	for range key >> 20 {
		enc.Write(zeros)
	}
	enc.Write(tail)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = walkRecords(rawBatch(int16(CodecZstd), 1, buf.Bytes()), func(Offset, int64) bool { calls++; return true })
	if !errors.Is(err, ErrCorruptBatch) || !strings.Contains(err.Error(), "decompresses to more than") || calls != 0 {
		t.Fatalf("bomb: err %v after %d records, want a corrupt batch past the bound", err, calls)
	}

	for codec := int16(1); codec <= int16(CodecZstd); codec++ {
		err := walkRecords(rawBatch(codec, 1, []byte("certainly not compressed data")), func(Offset, int64) bool { return true })
		if !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("codec %d over garbage: err %v, want ErrCorruptBatch", codec, err)
		}
	}
}

// A lookup by time skips the records below log start in a batch that
// straddles it, as Kafka's searchForTimestamp does, and goes on to the
// next batch when none is left in it.
func TestListOffsetBelowLogStart(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	for _, b := range []testBatch{plain(3, 100), plain(2, 200)} { // 0-2: 100-102, 3-4: 200-201
		g.produce("t", 0, b.encode())
	}
	log := mustTopic(t, g.r, "t").parts[0].log
	if err := g.store.SoftTrim(log, 1); err != nil {
		t.Fatal(err)
	}
	if off, ts, err := g.r.ListOffset("t", 0, 0); err != nil || off != 1 || ts != 101 {
		t.Fatalf("after trim to 1: %d %d %v; want 1 at 101", off, ts, err)
	}
	if off, ts, err := g.r.ListOffset("t", 0, -3); err != nil || off != 4 || ts != 201 {
		t.Fatalf("-3 after trim to 1: %d %d %v; want 4 at 201", off, ts, err)
	}
	if err := g.store.SoftTrim(log, 3); err != nil {
		t.Fatal(err)
	}
	if off, ts, err := g.r.ListOffset("t", 0, 101); err != nil || off != 3 || ts != 200 {
		t.Fatalf("after trim to 3: %d %d %v; want 3 at 200", off, ts, err)
	}
}
