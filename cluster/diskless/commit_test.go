package diskless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
)

// TestCommitOneObject (acknowledgement after PUT and commit, ranges tiling the log, checked range reads): a commit of several partitions writes
// one object; each partition's range reads back its batches, and the
// ranges of successive commits tile the partition.
func TestCommitOneObject(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	pkeys := []string{"t0-0", "t0-1", "t1-0"}
	owns := n.acquire(t, pkeys...)
	want := map[string]map[int64][]byte{}
	next := map[string]int64{}
	for round := range 3 {
		var bs []Batch
		for i, p := range pkeys {
			for range 1 + (i+round)%3 {
				b := batch(p, next[p], int32(1+i))
				next[p] += int64(b.Records)
				bs = append(bs, b)
				if want[p] == nil {
					want[p] = map[int64][]byte{}
				}
				want[p][b.Base] = b.Data
			}
		}
		allOK(t, n.c.Commit(ctxT(t), bs, owns))
		if objs := e.objects(t, commitsDir); len(objs) != round+1 {
			t.Fatalf("after %d commits, %d objects: %v", round+1, len(objs), objs)
		}
	}
	for _, p := range pkeys {
		start, end, got, ranges := e.readAll(t, n.c, p)
		if start != 0 || end != next[p] || len(ranges) != 3 {
			t.Fatalf("%s: log [%d, %d) in %d ranges, want [0, %d) in 3", p, start, end, len(ranges), next[p])
		}
		if len(got) != len(want[p]) {
			t.Fatalf("%s: %d batches, want %d", p, len(got), len(want[p]))
		}
		for base, data := range want[p] {
			if !bytes.Equal(got[base], data) {
				t.Fatalf("%s: batch %d differs", p, base)
			}
		}
	}
	for _, o := range e.objects(t, commitsDir) {
		if r := e.refs(t, o); r != int64(len(pkeys)) {
			t.Fatalf("object %s: %d references, want %d", o, r, len(pkeys))
		}
	}
}

// TestCommitRefusesBadInput: batches without their ownership, or not
// contiguous, are refused, and the other partitions are published.
func TestCommitRefusesBadInput(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	res := n.c.Commit(ctxT(t), []Batch{batch("p", 0, 2), batch("q", 0, 1), batch("q", 2, 1), batch("x", 0, 1)}, owns)
	if res["p"] != nil || !errors.Is(res["q"], ErrInvalid) || !errors.Is(res["x"], ErrNotOwned) {
		t.Fatalf("results %v", res)
	}
	if _, end, _, _ := e.readAll(t, n.c, "q"); end != 0 {
		t.Fatalf("q published to %d", end)
	}
}

// TestStaleOwnerFenced (fenced writers publish nothing): a commit whose ownership of one partition is
// lost (its lease revoked and the partition acquired by another node)
// gets ErrFenced for it and publishes nothing of it, while its other
// partitions are published; the new owner publishes at the same base.
func TestStaleOwnerFenced(t *testing.T) {
	e := newEnv(t, "")
	a1, a2, b := e.node("a"), e.node("a"), e.node("b")
	owns := a1.acquire(t, "p", "r")
	for k, v := range a2.acquire(t, "q") {
		owns[k] = v
	}
	allOK(t, a1.c.Commit(ctxT(t), []Batch{batch("p", 0, 1), batch("q", 0, 1), batch("r", 0, 1)}, owns))
	if _, err := e.cli.Revoke(ctxT(t), a2.sess.Lease()); err != nil { // a2's lease ends, as on expiry
		t.Fatal(err)
	}
	ob := b.acquire(t, "q")
	res := a1.c.Commit(ctxT(t), []Batch{batch("p", 1, 1), batch("q", 1, 1), batch("r", 1, 1)}, owns)
	var fe *owner.FencedError
	if !errors.Is(res["q"], owner.ErrFenced) || !errors.As(res["q"], &fe) || fe.Lost[0] != "q" {
		t.Fatalf("stale owner's commit of q: %v, want ErrFenced", res["q"])
	}
	if res["p"] != nil || res["r"] != nil {
		t.Fatalf("other partitions: %v", res)
	}
	if _, end, _, ranges := e.readAll(t, a1.c, "q"); end != 1 || len(ranges) != 1 {
		t.Fatalf("q after a fenced commit: end %d, %d ranges, want 1 and 1", end, len(ranges))
	}
	for _, p := range []string{"p", "r"} {
		if _, end, _, _ := e.readAll(t, a1.c, p); end != 2 {
			t.Fatalf("%s: end %d, want 2", p, end)
		}
	}
	nb := batch("q", 1, 3)
	allOK(t, b.c.Commit(ctxT(t), []Batch{nb}, ob))
	if _, end, got, _ := e.readAll(t, b.c, "q"); end != 4 || !bytes.Equal(got[1], nb.Data) {
		t.Fatalf("new owner's commit: end %d", end)
	}
	// A commit of the stale partition alone publishes nothing, and its
	// object does not stay.
	before := e.objects(t, commitsDir)
	res = a1.c.Commit(ctxT(t), []Batch{batch("q", 4, 1)}, owns)
	if !errors.Is(res["q"], owner.ErrFenced) {
		t.Fatalf("stale commit: %v", res)
	}
	if after := e.objects(t, commitsDir); len(after) != len(before) {
		t.Fatalf("objects %d, then %d after a fenced commit", len(before), len(after))
	}
}

// TestEndMismatch (ranges tiling the log): a commit that does not start at the published end
// (an overlap, a hole, a replay at 0) is refused and writes nothing.
func TestEndMismatch(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 10)}, owns))
	var q int64
	for _, b := range []Batch{batch("p", 5, 10), batch("p", 11, 1), batch("p", 0, 10), batch("p", 9, 1)} {
		res := n.c.Commit(ctxT(t), []Batch{b, batch("q", q, 1)}, owns)
		if !errors.Is(res["p"], ErrEndMismatch) {
			t.Fatalf("commit at %d after end 10: %v, want ErrEndMismatch", b.Base, res["p"])
		}
		if res["q"] != nil {
			t.Fatalf("q: %v", res["q"])
		}
		q++
	}
	if _, end, _, ranges := e.readAll(t, n.c, "p"); end != 10 || len(ranges) != 1 {
		t.Fatalf("p: end %d in %d ranges, want 10 in 1", end, len(ranges))
	}
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 10, 1)}, owns))
}

// TestCorrupt (checked range reads): a damaged object, or a range record whose offsets do
// not match its batches, reads as ErrCorrupt.
func TestCorrupt(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 3), batch("p", 3, 2), batch("q", 0, 1)}, owns))
	_, _, ranges, err := n.c.Log(ctxT(t), "p")
	if err != nil || len(ranges) != 1 {
		t.Fatalf("%v %v", ranges, err)
	}
	r := ranges[0]
	for _, bad := range []Range{
		func() Range { x := r; x.End = 6; return x }(),  // claims more offsets
		func() Range { x := r; x.Base = 1; return x }(), // starts elsewhere
	} {
		if _, err := n.c.ReadRange(ctxT(t), bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("range [%d, %d) over batches [0, 5): %v, want ErrCorrupt", bad.Base, bad.End, err)
		}
	}
	path := filepath.Join(e.dir, r.Object)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[r.Pos+r.Len-1] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ReadRange(ctxT(t), r); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged object: %v, want ErrCorrupt", err)
	}
	if err := os.WriteFile(path, data[:r.Pos+r.Len-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ReadRange(ctxT(t), r); err == nil {
		t.Fatal("truncated object read without error")
	}
}

// TestManyPartitions (ranges tiling the log, fenced writers publish nothing): a commit of more partitions than one etcd
// transaction holds (at the default --max-txn-ops) is one object,
// published over several transactions, every partition whole.
func TestManyPartitions(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	var pkeys []string
	for i := range 150 {
		pkeys = append(pkeys, fmt.Sprintf("t-%d", i))
	}
	owns := n.acquire(t, pkeys...)
	var bs []Batch
	for _, p := range pkeys {
		bs = append(bs, batch(p, 0, 2), batch(p, 2, 1))
	}
	res := n.c.Commit(ctxT(t), bs, owns)
	if len(res) != len(pkeys) {
		t.Fatalf("%d results for %d partitions", len(res), len(pkeys))
	}
	allOK(t, res)
	objs := e.objects(t, commitsDir)
	if len(objs) != 1 || e.refs(t, objs[0]) != 150 {
		t.Fatalf("objects %v", objs)
	}
	for _, p := range pkeys {
		if _, end, got, _ := e.readAll(t, n.c, p); end != 3 || len(got) != 2 {
			t.Fatalf("%s: end %d, %d batches", p, end, len(got))
		}
	}
}

// TestEtcdRestartMidCommit (acknowledgement after PUT and commit): etcd stopping between a commit's PUT and
// its transaction gives an error for every partition, never a nil; after
// the restart nothing of it is published and the same offsets commit.
func TestEtcdRestartMidCommit(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 1), batch("q", 0, 1)}, owns))
	n.c.beforeChunk = func(int) { e.etcd.Stop() }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	res := n.c.Commit(ctx, []Batch{batch("p", 1, 1), batch("q", 1, 1)}, owns)
	cancel()
	n.c.beforeChunk = nil
	for _, p := range []string{"p", "q"} {
		if res[p] == nil {
			t.Fatalf("%s acknowledged while etcd was down", p)
		}
	}
	e.etcd.Restart()
	for _, p := range []string{"p", "q"} {
		if _, end, _, _ := e.readAll(t, n.c, p); end != 1 {
			t.Fatalf("%s: end %d after a failed commit, want 1", p, end)
		}
	}
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 1, 1), batch("q", 1, 1)}, owns))
}

// TestEtcdRestartsUnderLoad (acknowledgement after PUT and commit, ranges tiling the log): commits go on while etcd restarts;
// every acknowledged batch is published at its offsets, and after an
// error the writer re-reads the end (no acknowledgement without a fenced commit) and goes on from there.
func TestEtcdRestartsUnderLoad(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	acked := map[string]map[int64][]byte{"p": {}, "q": {}}
	done := make(chan struct{})
	stop := make(chan struct{})
	progress := make(chan struct{}, 1) // a batch acknowledged
	var errs int
	ctx := ctxT(t)
	go func() {
		defer close(done)
		next := map[string]int64{}
		for {
			select {
			case <-stop:
				return
			default:
			}
			bs := []Batch{batch("p", next["p"], 2), batch("q", next["q"], 1)}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			res := n.c.Commit(ctx, bs, owns)
			cancel()
			for _, b := range bs {
				if res[b.PKey] == nil {
					acked[b.PKey][b.Base] = b.Data
					next[b.PKey] = b.Base + int64(b.Records)
					select {
					case progress <- struct{}{}:
					default:
					}
					continue
				}
				errs++
				// Unknown outcome: read the published end again.
				for ctx.Err() == nil {
					if _, end, _, err := n.c.Log(ctx, b.PKey); err == nil {
						next[b.PKey] = end
						break
					}
				}
			}
		}
	}()
	// waitAcked waits for m more acknowledgements.
	waitAcked := func(m int) {
		t.Helper()
		for range m {
			select {
			case <-progress:
			case <-ctx.Done():
				t.Fatal("no batch acknowledged after the restart")
			}
		}
	}
	for range 3 {
		waitAcked(5)
		e.etcd.Restart()
	}
	waitAcked(5)
	close(stop)
	<-done
	for p, want := range acked {
		_, _, got, _ := e.readAll(t, n.c, p)
		for base, data := range want {
			if !bytes.Equal(got[base], data) {
				t.Fatalf("%s: acknowledged batch %d not published", p, base)
			}
		}
	}
	t.Logf("acknowledged %d+%d batches, %d errors", len(acked["p"]), len(acked["q"]), errs)
}

// TestCommitAcrossReferenceChanges (reference-counted collection): between the transactions of a
// commit split over several, the ranges already published may be merged
// or deleted: the commit's later transactions count references from the
// object's record as it is then, and if the object was collected
// meanwhile they publish nothing.
func TestCommitAcrossReferenceChanges(t *testing.T) {
	e := newEnv(t, "")
	e.opts.MaxTxnOps = 10 // 2 partitions per transaction
	n := e.node("a")
	owns := n.acquire(t, "p", "q", "r")
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 1)}, owns))
	// A merge of p between the two transactions.
	n.c.beforeChunk = func(i int) {
		if i == 1 {
			if m, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil || m != 2 {
				t.Errorf("merge between transactions: %d, %v", m, err)
			}
		}
	}
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 1, 1), batch("q", 0, 1), batch("r", 0, 1)}, owns))
	objs := e.objects(t, commitsDir)
	last := objs[len(objs)-1]
	if got := e.refs(t, last); got != 2 {
		t.Fatalf("%s: %d references, want 2 (q and r; p merged)", last, got)
	}
	// p and q deleted, the object collected, between the transactions:
	// r is not published.
	n.c.beforeChunk = func(i int) {
		if i == 1 {
			if err := n.c.DeletePartitions(ctxT(t), []string{"p", "q"}); err != nil {
				t.Error(err)
			}
			if _, err := n.c.Collect(ctxT(t)); err != nil {
				t.Error(err)
			}
		}
	}
	res := n.c.Commit(ctxT(t), []Batch{batch("p", 2, 1), batch("q", 1, 1), batch("r", 1, 1)}, owns)
	n.c.beforeChunk = nil
	if res["p"] != nil || res["q"] != nil || !errors.Is(res["r"], ErrObjectGone) {
		t.Fatalf("results %v, want r's ErrObjectGone", res)
	}
	if _, end, _, _ := e.readAll(t, n.c, "r"); end != 1 {
		t.Fatalf("r: end %d, want 1", end)
	}
}
