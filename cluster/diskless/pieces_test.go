package diskless

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// TestMergedRangeReadsInPieces (merged ranges in pieces, checked range reads, pin revalidation): a merged range is listed
// with pieces that tile it, each whole batches; a piece is read alone,
// under a pin of the whole range's record, fetching only its bytes and
// checked against its own SHA-256: a byte flipped in one piece fails
// that piece's read (ErrCorrupt) and no other's.
func TestMergedRangeReadsInPieces(t *testing.T) {
	e := newEnv(t, "")
	e.opts.PieceBytes = 300
	n := e.node("a")
	owns := n.acquire(t, "p")
	want := commitRounds(t, n.c, owns, []string{"p"}, 30)
	if merged, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil || merged != 30 {
		t.Fatalf("merge: %d ranges, %v; want 30", merged, err)
	}
	_, _, ranges, err := n.c.Log(ctxT(t), "p")
	if err != nil || len(ranges) != 1 {
		t.Fatalf("log: %d ranges, %v", len(ranges), err)
	}
	whole := ranges[0]
	parts := whole.Parts()
	if len(parts) < 3 {
		t.Fatalf("merged range of %d bytes in %d pieces, want several of at most 300", whole.Len, len(parts))
	}
	lease := n.sess.Lease()
	next, pos := whole.Base, whole.Pos
	for _, p := range parts {
		if p.Base != next || p.Pos != pos || p.Len >= whole.Len || p.Record != whole.Base || p.Rev != whole.Rev {
			t.Fatalf("piece %+v after [.., %d) at byte %d of %+v", p, next, pos, whole)
		}
		next, pos = p.End, p.Pos+p.Len
		data, err := n.c.ReadPinned(ctxT(t), lease, p)
		if err != nil {
			t.Fatalf("piece [%d, %d): %v", p.Base, p.End, err)
		}
		var joined []byte
		for off := p.Base; off < p.End; {
			b, ok := want["p"][off]
			if !ok {
				t.Fatalf("piece [%d, %d) cuts the batch holding %d", p.Base, p.End, off)
			}
			joined = append(joined, b...)
			off += int64(int32(binary.BigEndian.Uint32(b[lastDeltaOff:]))) + 1
		}
		if !bytes.Equal(data[0], joined) {
			t.Fatalf("piece [%d, %d): bytes differ from its batches", p.Base, p.End)
		}
	}
	if next != whole.End || pos != whole.Pos+whole.Len {
		t.Fatalf("pieces end at %d, byte %d; range %+v", next, pos, whole)
	}
	// Flip a byte of the second piece in the object.
	obj, err := e.bucket.ReadAll(ctxT(t), whole.Object)
	if err != nil {
		t.Fatal(err)
	}
	obj[parts[1].Pos+parts[1].Len-1] ^= 0xff
	if err := e.bucket.WriteAll(ctxT(t), whole.Object, obj, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ReadPinned(ctxT(t), lease, parts[1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt piece read: %v, want ErrCorrupt", err)
	}
	for _, i := range []int{0, 2} {
		if _, err := n.c.ReadPinned(ctxT(t), lease, parts[i]); err != nil {
			t.Fatalf("piece %d beside a corrupt one: %v", i, err)
		}
	}
	if _, err := n.c.ReadPinned(ctxT(t), lease, whole); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("whole range read: %v, want ErrCorrupt", err)
	}
}
