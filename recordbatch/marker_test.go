package recordbatch

import (
	"errors"
	"testing"
)

// TestMarkerRoundTrip: a marker is a valid control batch (CRC, length,
// transactional and control bits, no sequence) whose record decodes back
// to its type and coordinator epoch; a truncated one is ErrCorruptBatch.
func TestMarkerRoundTrip(t *testing.T) {
	for _, commit := range []bool{true, false} {
		b := EncodeMarker(42, 3, commit, 17, 1000)
		h, n, err := Parse(b)
		if err != nil || n != len(b) {
			t.Fatalf("Parse: %v (%d of %d bytes)", err, n, len(b))
		}
		if !h.Control() || !h.Transactional() || h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != -1 || h.Records != 1 {
			t.Fatalf("header %+v", h)
		}
		m, err := DecodeMarker(b)
		if err != nil || m.Commit != commit || m.CoordinatorEpoch != 17 {
			t.Fatalf("DecodeMarker = %+v, %v", m, err)
		}
		if _, err := DecodeMarker(b[:HeaderLen+3]); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("truncated marker: %v", err)
		}
	}
}
