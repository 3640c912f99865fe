package resolver

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzSplitBatches feeds arbitrary produce blobs to the batch validator the
// produce path runs (splitBatches/parseBatch): it must never panic, every
// error wraps ErrCorruptBatch or ErrUnsupportedMagic, and what it accepts
// is exactly the blob, cut into batches that each re-validate. With fixCRC
// the harness recomputes the first batch's CRC, so the fuzzer explores the
// checks behind it (lengths, counts, records) instead of stopping there.
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
		batches, hdrs, err := splitBatches(blob)
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) && !errors.Is(err, ErrUnsupportedMagic) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
			return
		}
		total := 0
		for i, b := range batches {
			h, n, err := parseBatch(b)
			if err != nil || n != len(b) || h != hdrs[i] {
				t.Fatalf("batch %d re-parses as %+v (%d of %d bytes): %v", i, h, n, len(b), err)
			}
			if h.Records < 1 || h.Attributes&(transactionalBit|controlBit) != 0 {
				t.Fatalf("batch %d accepted with %+v", i, h)
			}
			total += n
		}
		if total != len(blob) {
			t.Fatalf("batches cover %d of %d bytes", total, len(blob))
		}
	})
}
