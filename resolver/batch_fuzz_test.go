package resolver

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzSplitBatches feeds arbitrary produce blobs to the batch validator the
// produce path runs (splitBatches/parseBatch, then scanRecords): it must
// never panic, every error wraps ErrCorruptBatch, ErrInvalidRecord or
// ErrUnsupportedMagic, and what it accepts is exactly the blob, one batch
// that re-validates. With fixCRC the harness recomputes the first batch's
// CRC, so the fuzzer explores the checks behind it (lengths, counts,
// records) instead of stopping there.
// The oracle (crcOracle) cuts the blob itself from the Kafka wire layout
// and recomputes each accepted batch's CRC32C without the parser's code.
func FuzzSplitBatches(f *testing.F) {
	f.Add(false, plain(3, 1000).encode())
	bad := plain(3, 1000).encode()
	bad[len(bad)-1] ^= 0x40 // a record byte under the CRC
	f.Add(false, bad)
	bad2 := append(plain(1, 5).encode(), idem(7, 1, 5, 2).encode()...)
	bad2[len(bad2)-3] ^= 1 // the second batch's CRC is wrong
	f.Add(false, bad2)
	f.Add(false, append(idem(7, 1, 5, 2).encode(), plain(1, 5).encode()...))
	f.Add(true, plain(2, 9).encode()[:40])
	f.Add(true, []byte{})
	f.Fuzz(func(t *testing.T, fixCRC bool, blob []byte) {
		if fixCRC && len(blob) >= batchHeaderLen {
			end := min(len(blob), batchLenPrefix+int(int32(binary.BigEndian.Uint32(blob[batchLengthOff:]))))
			if end > attrsOff {
				binary.BigEndian.PutUint32(blob[crcOff:], crc32.Checksum(blob[attrsOff:end], castagnoli))
			}
		}
		sentinel := func(err error) bool {
			return errors.Is(err, ErrCorruptBatch) || errors.Is(err, ErrInvalidRecord) || errors.Is(err, ErrUnsupportedMagic)
		}
		batches, hdrs, err := splitBatches(blob)
		if err != nil {
			if !sentinel(err) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if len(batches) != 1 || len(batches[0]) != len(blob) {
			t.Fatalf("%d batches cover %d of %d bytes", len(batches), len(batches[0]), len(blob))
		}
		h, n, err := parseBatch(blob)
		if err != nil || n != len(blob) || h != hdrs[0] {
			t.Fatalf("batch re-parses as %+v (%d of %d bytes): %v", h, n, len(blob), err)
		}
		if h.Records < 1 || h.Control() || (h.Transactional() && !h.Idempotent()) {
			t.Fatalf("batch accepted with %+v", h)
		}
		if err := scanRecords(blob, 1<<20, nil); err != nil && !sentinel(err) {
			t.Fatalf("records: error %v wraps no sentinel", err)
		}
		crcOracle(t, blob, batches)
	})
}

// crcOracle checks, independently of the parser under test, that blob is
// the accepted batches back to back and that each one's CRC32C is right.
// Kafka's record batch v2: batchLength (int32) at byte 8 counts the bytes
// after byte 12; the crc (uint32) at byte 17 is the Castagnoli CRC32 of
// bytes 21 (attributes) to the batch's end.
func crcOracle(t *testing.T, blob []byte, batches [][]byte) {
	t.Helper()
	table := crc32.MakeTable(crc32.Castagnoli)
	pos := 0
	for i, b := range batches {
		if len(blob)-pos < 21 {
			t.Fatalf("batch %d accepted with %d bytes left", i, len(blob)-pos)
		}
		end := pos + 12 + int(int32(binary.BigEndian.Uint32(blob[pos+8:])))
		if end < pos+21 || end > len(blob) {
			t.Fatalf("batch %d accepted with length field %d at byte %d of %d", i, end-pos-12, pos, len(blob))
		}
		if &b[0] != &blob[pos] || len(b) != end-pos {
			t.Fatalf("batch %d is not blob[%d:%d]", i, pos, end)
		}
		want := binary.BigEndian.Uint32(blob[pos+17:])
		if got := crc32.Checksum(blob[pos+21:end], table); got != want {
			t.Fatalf("batch %d accepted with crc %08x, its bytes hash to %08x", i, want, got)
		}
		pos = end
	}
	if pos != len(blob) {
		t.Fatalf("accepted batches end at %d of %d bytes", pos, len(blob))
	}
}
