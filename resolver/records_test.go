package resolver

import (
	"bytes"
	"encoding/binary"
	"errors"
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
	// One record claiming more than the bound, then that many zeros.
	rec := binary.AppendVarint(nil, maxRecordScanBytes+(1<<20))
	rec = append(rec, 0, 0, 0) // attributes, timestamp delta, offset delta
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(rec)
	zeros := make([]byte, 1<<20)
	for range maxRecordScanBytes>>20 + 2 {
		enc.Write(zeros)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = walkRecords(rawBatch(codecZstd, 1, buf.Bytes()), func(Offset, int64) bool { calls++; return true })
	if !errors.Is(err, errScanTooLarge) || calls != 0 {
		t.Fatalf("bomb: err %v after %d records, want errScanTooLarge", err, calls)
	}

	for codec := int16(1); codec <= codecZstd; codec++ {
		err := walkRecords(rawBatch(codec, 1, []byte("certainly not compressed data")), func(Offset, int64) bool { return true })
		if !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("codec %d over garbage: err %v, want ErrCorruptBatch", codec, err)
		}
	}
}
