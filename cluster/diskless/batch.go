package diskless

import (
	"encoding/binary"
	"fmt"
)

// The few fields of a Kafka record batch (magic 2) that tiling needs; the
// layers below the wire read batch headers themselves (docs/DESIGN.md
// "Layers").
const (
	batchHeaderLen = 61 // bytes before the first record
	batchLenPrefix = 12 // baseOffset + batchLength
	magicOff       = 16
	lastDeltaOff   = 23
)

// tile checks that data is record batches back to back that cover the
// offsets [base, end) exactly: each batch starts where the previous one
// ended (ranges tiling the log, checked range reads).
func tile(data []byte, base, end int64) error {
	next := base
	for pos := 0; pos < len(data); {
		b := data[pos:]
		if len(b) < batchHeaderLen {
			return fmt.Errorf("batch at byte %d: %d bytes, shorter than a header", pos, len(b))
		}
		size := batchLenPrefix + int64(int32(binary.BigEndian.Uint32(b[8:])))
		if size < batchHeaderLen || size > int64(len(b)) {
			return fmt.Errorf("batch at byte %d: length %d of %d bytes left", pos, size, len(b))
		}
		if b[magicOff] != 2 {
			return fmt.Errorf("batch at byte %d: magic %d", pos, b[magicOff])
		}
		first := int64(binary.BigEndian.Uint64(b))
		delta := int64(int32(binary.BigEndian.Uint32(b[lastDeltaOff:])))
		if first != next || delta < 0 {
			return fmt.Errorf("batch at byte %d covers [%d, %d], want it to start at %d", pos, first, first+delta, next)
		}
		next = first + delta + 1
		pos += int(size)
	}
	if next != end {
		return fmt.Errorf("batches cover [%d, %d), want [%d, %d)", base, next, base, end)
	}
	return nil
}
