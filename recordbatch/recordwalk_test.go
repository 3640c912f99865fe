package recordbatch

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// walkBoth walks sec with walkPlain and with the stream walk the
// compressed batches take, and returns what each reported.
func walkBoth(sec []byte, count int32) (plain, stream []RecordMeta, plainErr, streamErr error) {
	plainErr = walkPlain(sec, count, 1<<30, false, func(m RecordMeta) error {
		plain = append(plain, m)
		return nil
	})
	s := &recordStream{buf: sec, total: int64(len(sec)), limit: 1 << 30}
	streamErr = s.walk(count, func(m RecordMeta) error {
		stream = append(stream, m)
		return nil
	})
	return plain, stream, plainErr, streamErr
}

// The uncompressed walk (inline varints) accepts exactly what the stream
// walk accepts and reports the same records, for valid sections and for
// sections with bytes changed, cut or varints widened.
func TestWalkPlainAgreesWithStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3000 {
		n := 1 + rng.IntN(40)
		b := plainBatch(n, rng.IntN(300))
		sec := slices.Clone(b[HeaderLen:])
		switch round % 4 {
		case 1: // a byte changed
			sec[rng.IntN(len(sec))] = byte(rng.Uint32())
		case 2: // cut short
			sec = sec[:rng.IntN(len(sec))]
		case 3: // a record's timestamp delta as a wide varint
			sec = widenFirstTimestamp(sec, rng.IntN(9)+1)
		}
		plain, stream, pe, se := walkBoth(sec, int32(n))
		if (pe == nil) != (se == nil) || !slices.Equal(plain, stream) {
			t.Fatalf("round %d: plain %d records, err %v; stream %d records, err %v", round, len(plain), pe, len(stream), se)
		}
		if round%4 == 0 && pe != nil {
			t.Fatalf("round %d: a valid section refused: %v", round, pe)
		}
	}
}

// widenFirstTimestamp rewrites the first record's timestamp delta (one
// byte in plainBatch's records) as a varint of extra more bytes, its
// length prefix grown to match (one byte while it stays under 64).
func widenFirstTimestamp(sec []byte, extra int) []byte {
	size, w := binary.Varint(sec)
	if w != 1 || size+int64(extra) >= 64 {
		return sec
	}
	ts := sec[w+1]
	wide := []byte{ts | 0x80}
	for range extra - 1 {
		wide = append(wide, 0x80)
	}
	wide = append(wide, 0)
	out := binary.AppendVarint(nil, size+int64(extra))
	out = append(out, sec[w]) // attributes
	out = append(out, wide...)
	return append(out, sec[w+2:]...)
}
