package diskless

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/kgateway/kgateway/cluster/owner"
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

// bigCommit commits count batches of pkey, of 200 to 500 bytes and 1 to
// 3 offsets each, in ONE commit, and returns their bytes in order.
func bigCommit(t testing.TB, n *node, owns map[string]owner.Ownership, pkey string, count int) []Batch {
	t.Helper()
	var bs []Batch
	next := int64(0)
	for i := range count {
		b := sizedBatch(pkey, next, int32(1+i%3), 200+(i*37)%300)
		next += int64(b.Records)
		bs = append(bs, b)
	}
	allOK(t, n.c.Commit(ctxT(t), bs, owns))
	return bs
}

// batchesIn is the bytes of the batches of bs in [base, end).
func batchesIn(bs []Batch, base, end int64) []byte {
	var out []byte
	for _, b := range bs {
		if b.Base >= base && b.Base < end {
			out = append(out, b.Data...)
		}
	}
	return out
}

// TestCommitRangeReadsInPieces (commit ranges in pieces, checked range
// reads, floored reads): one commit's range of a partition larger than
// PieceBytes is published in pieces of whole batches, each at most
// PieceBytes; a read of one offset in its middle fetches only the piece
// that holds it from the object store (bytes counted at the bucket),
// checked against the piece's published SHA-256: a byte flipped in it
// or an object cut short fails that read with ErrCorrupt, never serves
// the bytes, and leaves the other pieces readable. A range record
// without pieces (as written before pieces, or too short for them) is
// still read whole.
func TestCommitRangeReadsInPieces(t *testing.T) {
	e := newEnv(t, "")
	e.opts.PieceBytes = 1024
	n := e.node("a")
	owns := n.acquire(t, "p", "old")
	bs := bigCommit(t, n, owns, "p", 80)
	_, _, ranges, err := n.c.Log(ctxT(t), "p")
	if err != nil || len(ranges) != 1 {
		t.Fatalf("log: %d ranges, %v; want the commit's one", len(ranges), err)
	}
	whole := ranges[0]
	parts := whole.Parts()
	if whole.Len < 20*1024 || len(parts) < 20 {
		t.Fatalf("a commit range of %d bytes in %d pieces, want at least 20 of at most 1024", whole.Len, len(parts))
	}
	next, pos := whole.Base, whole.Pos
	for _, p := range parts {
		if p.Base != next || p.Pos != pos || p.Len > 1024 || p.Record != whole.Base || p.Rev != whole.Rev {
			t.Fatalf("piece %+v after [.., %d) at byte %d of %+v", p, next, pos, whole)
		}
		next, pos = p.End, p.Pos+p.Len
	}
	if next != whole.End || pos != whole.Pos+whole.Len {
		t.Fatalf("pieces end at %d, byte %d; range %+v", next, pos, whole)
	}
	lease := n.sess.Lease()
	mid := (whole.Base + whole.End) / 2
	k := slices.IndexFunc(parts, func(p Range) bool { return p.Base <= mid && mid < p.End })
	read := func(p Range) ([]byte, int64, error) {
		before := n.c.Requests().ObjectBytesRead
		data, err := n.c.ReadFloored(ctxT(t), lease, p)
		fetched := n.c.Requests().ObjectBytesRead - before
		if err != nil {
			return nil, fetched, err
		}
		return data[0], fetched, nil
	}
	data, fetched, err := read(parts[k])
	if err != nil {
		t.Fatalf("piece [%d, %d) holding %d: %v", parts[k].Base, parts[k].End, mid, err)
	}
	if !bytes.Equal(data, batchesIn(bs, parts[k].Base, parts[k].End)) {
		t.Fatalf("piece [%d, %d): bytes differ from its batches", parts[k].Base, parts[k].End)
	}
	if fetched != parts[k].Len || fetched > 1024 {
		t.Fatalf("a read of offset %d fetched %d bytes of a %d-byte range, want its piece's %d", mid, fetched, whole.Len, parts[k].Len)
	}

	// A byte flipped in the piece, then the object cut in its last piece.
	obj, err := e.bucket.ReadAll(ctxT(t), whole.Object)
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(obj)
	bad[parts[k].Pos+parts[k].Len-1] ^= 0xff
	if err := e.bucket.WriteAll(ctxT(t), whole.Object, bad, nil); err != nil {
		t.Fatal(err)
	}
	if _, fetched, err := read(parts[k]); !errors.Is(err, ErrCorrupt) || fetched > parts[k].Len {
		t.Fatalf("corrupt piece read: %v after %d bytes, want ErrCorrupt after at most %d", err, fetched, parts[k].Len)
	}
	if _, _, err := read(parts[k+1]); err != nil {
		t.Fatalf("the piece after a corrupt one: %v", err)
	}
	last := parts[len(parts)-1]
	if err := e.bucket.WriteAll(ctxT(t), whole.Object, obj[:last.Pos+last.Len/2], nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := read(last); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated piece read: %v, want ErrCorrupt", err)
	}
	if _, _, err := read(parts[k]); err != nil {
		t.Fatalf("a whole piece of a truncated object: %v", err)
	}

	// A range record without pieces is read whole, checked whole.
	oldBs := bigCommit(t, n, owns, "old", 40)
	_, _, ranges, err = n.c.Log(ctxT(t), "old")
	if err != nil || len(ranges) != 1 || len(ranges[0].Pieces) == 0 {
		t.Fatalf("log: %v, %v; want one range in pieces", ranges, err)
	}
	r := ranges[0]
	r.Pieces = nil
	if _, err := e.cli.Put(ctxT(t), n.c.rangeKey("old", r.Base), encodeRange(r)); err != nil {
		t.Fatal(err)
	}
	_, _, ranges, err = n.c.Log(ctxT(t), "old")
	if err != nil || len(ranges) != 1 || len(ranges[0].Parts()) != 1 {
		t.Fatalf("log of a record without pieces: %v, %v", ranges, err)
	}
	data, fetched, err = read(ranges[0])
	if err != nil || !bytes.Equal(data, batchesIn(oldBs, r.Base, r.End)) || fetched != r.Len {
		t.Fatalf("record without pieces: %v, %d bytes fetched of %d", err, fetched, r.Len)
	}
}

// TestPieceRecordSize (merged ranges in pieces, commit ranges in pieces):
// a range record grows by at most about 150 bytes per piece, so the
// record of the largest merged range, maxRun pieces of up to MergeMax
// together, at offsets and timestamps of realistic width, stays under
// 10 KB.
func TestPieceRecordSize(t *testing.T) {
	c := New(nil, nil, nil, prefix, "a", Options{})
	n := c.maxRun()
	r := Range{PKey: "p", Base: 1 << 40, Object: "merged/p/0000000000000000-0123456789abc", Len: c.opts.MergeMax, MaxTime: 1_765_000_000_000}
	step := c.opts.MergeMax / int64(n)
	for i := range n {
		r.Pieces = append(r.Pieces, Piece{Base: r.Base + int64(i)*100_000, End: r.Base + int64(i+1)*100_000,
			Pos: int64(i) * step, Len: step, SHA256: [32]byte{byte(i)}, MaxTime: r.MaxTime})
	}
	r.End = r.Pieces[n-1].End
	whole, bare := len(encodeRange(r)), len(encodeRange(Range{PKey: r.PKey, Base: r.Base, End: r.End, Object: r.Object, Len: r.Len, MaxTime: r.MaxTime}))
	t.Logf("a %d MiB merged range in %d pieces: a record of %d bytes (%d without pieces)", r.Len>>20, n, whole, bare)
	if per := (whole - bare) / n; per > 155 || whole > 10_000 {
		t.Fatalf("%d bytes per piece, %d in all: etcd values grow past the bound", per, whole)
	}
}
