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
func FuzzSplitBatches(f *testing.F) {
	f.Add(false, plain(3, 1000).encode())
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
		if h.Records < 1 || h.Attributes&(transactionalBit|controlBit) != 0 {
			t.Fatalf("batch accepted with %+v", h)
		}
		if err := scanRecords(blob, 1<<20, nil); err != nil && !sentinel(err) {
			t.Fatalf("records: error %v wraps no sentinel", err)
		}
	})
}
