package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage/objstore"
)

// pieceBatch is a Kafka record batch (magic 2) of size bytes covering
// [base, base+n): only the header fields the published ranges check.
func pieceBatch(pkey string, base int64, n int32, size int) diskless.Batch {
	b := bytes.Repeat([]byte{byte(base)}, size)
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[8:], uint32(size-12))
	b[16] = 2
	binary.BigEndian.PutUint32(b[23:], uint32(n-1))
	return diskless.Batch{PKey: pkey, Base: base, Records: n, MaxTime: base, Data: b}
}

// TestReadBelowCacheFetchesAPiece (commit ranges in pieces, the range
// cache, ledger R21): a read below the cache of one offset in the middle
// of a published range many pieces long gets one candidate, the piece
// that holds the offset, and fetches only its bytes from the object
// store (counted at the bucket), checked; the same read again is served
// by the range cache, fetching nothing.
func TestReadBelowCacheFetchesAPiece(t *testing.T) {
	e := etcdtest.Start(t)
	n, err := Open(Config{NodeID: 1, Endpoints: []string{e.Endpoint()}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bucket, err := objstore.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	const pieceBytes = 4096
	d := diskless.New(n.cli, n.Owners(), bucket, n.Prefix(), n.Name(), diskless.Options{PieceBytes: pieceBytes})
	n.p.Diskless = d
	const pkey = "t-0"
	o, err := n.Owners().Acquire(ctx, pkey)
	if err != nil {
		t.Fatal(err)
	}
	var bs []diskless.Batch
	var want []byte
	for i := range 100 {
		b := pieceBatch(pkey, int64(2*i), 2, 300+i*7)
		bs = append(bs, b)
		if i == 50 {
			want = b.Data
		}
	}
	if res := d.Commit(ctx, bs, map[string]owner.Ownership{pkey: o}); res[pkey] != nil {
		t.Fatal(res[pkey])
	}
	p := published{n: n, h: &held{pkey: pkey, o: o}}
	cands, err := p.Candidates(ctx, 100, 101)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].Len > pieceBytes || cands[0].Base > 100 || cands[0].End <= 100 {
		t.Fatalf("candidates of offset 100 in a range of %d bytes: %+v, want its one piece of at most %d", totalLen(bs), cands, pieceBytes)
	}
	for round, wantFetched := range []int64{cands[0].Len, 0} {
		before := d.Requests().ObjectBytesRead
		data, err := p.Read(ctx, []ledger.PublishedRange{cands[0]})
		if err != nil {
			t.Fatal(err)
		}
		if fetched := d.Requests().ObjectBytesRead - before; fetched != wantFetched {
			t.Fatalf("read %d of offset 100 fetched %d bytes of a %d-byte range, want %d", round, fetched, totalLen(bs), wantFetched)
		}
		if !bytes.Contains(data[0], want) || int64(len(data[0])) != cands[0].Len {
			t.Fatalf("read %d: %d bytes, not the piece holding offset 100", round, len(data[0]))
		}
	}
}

func totalLen(bs []diskless.Batch) (n int) {
	for _, b := range bs {
		n += len(b.Data)
	}
	return n
}
