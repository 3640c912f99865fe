package diskless

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kgateway/kgateway/cluster/owner"
)

// commitRounds commits rounds group commits of one batch per partition
// (of 1 + round%3 records) and returns every batch by partition and base.
func commitRounds(t testing.TB, c *Committer, owns map[string]owner.Ownership, pkeys []string, rounds int) map[string]map[int64][]byte {
	t.Helper()
	want := map[string]map[int64][]byte{}
	next := map[string]int64{}
	for round := range rounds {
		var bs []Batch
		for _, p := range pkeys {
			b := batch(p, next[p], int32(1+round%3))
			next[p] += int64(b.Records)
			bs = append(bs, b)
			if want[p] == nil {
				want[p] = map[int64][]byte{}
			}
			want[p][b.Base] = b.Data
		}
		allOK(t, c.Commit(ctxT(t), bs, owns))
	}
	return want
}

// sameBatches fails unless pkey's published batches are want's.
func (e *env) sameBatches(t testing.TB, c *Committer, pkey string, want map[int64][]byte) []Range {
	t.Helper()
	_, _, got, ranges := e.readAll(t, c, pkey)
	if len(got) != len(want) {
		t.Fatalf("%s: %d batches, want %d", pkey, len(got), len(want))
	}
	for base, data := range want {
		if !bytes.Equal(got[base], data) {
			t.Fatalf("%s: batch at %d differs", pkey, base)
		}
	}
	return ranges
}

// TestMergeKeepsBytes (merges keep the bytes, reference-counted collection): merging a partition's ranges leaves every
// offset's batch identical, in fewer records; the replaced objects lose
// their references, and once no partition references them Collect
// deletes them and nothing else. A stale owner cannot merge.
func TestMergeKeepsBytes(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	want := commitRounds(t, n.c, owns, []string{"p", "q"}, 30)
	commits := e.objects(t, commitsDir)
	merged, err := n.c.Merge(ctxT(t), owns["p"], "p")
	if err != nil || merged != 30 {
		t.Fatalf("merge: %d ranges, %v; want 30", merged, err)
	}
	ranges := e.sameBatches(t, n.c, "p", want["p"])
	if len(ranges) != 1 || e.keys(t, "log/p/r/") != 1 {
		t.Fatalf("%d ranges after the merge, want 1", len(ranges))
	}
	for _, o := range commits {
		if r := e.refs(t, o); r != 1 {
			t.Fatalf("%s: %d references after p's merge, want 1 (q's)", o, r)
		}
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 0 {
		t.Fatalf("collect while q references every object: %d, %v", got, err)
	}
	if merged, err := n.c.Merge(ctxT(t), owns["q"], "q"); err != nil || merged != 30 {
		t.Fatalf("merge q: %d, %v", merged, err)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != len(commits) {
		t.Fatalf("collect: %d deleted, %v; want the %d commit objects", got, err, len(commits))
	}
	if left := e.objects(t, commitsDir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	e.sameBatches(t, n.c, "p", want["p"])
	e.sameBatches(t, n.c, "q", want["q"])
	// Nothing to merge: nothing changes.
	if merged, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil || merged != 0 {
		t.Fatalf("merge of one range: %d, %v", merged, err)
	}
	// A stale owner merges nothing, and leaves no object.
	if err := n.m.Release(ctxT(t), owns["q"]); err != nil {
		t.Fatal(err)
	}
	b := e.node("b")
	ob := b.acquire(t, "q")
	_, end, _, _ := e.readAll(t, n.c, "q")
	for i := range 3 {
		allOK(t, b.c.Commit(ctxT(t), []Batch{batch("q", end+int64(i), 1)}, ob))
	}
	if _, err := n.c.Merge(ctxT(t), owns["q"], "q"); !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("stale merge: %v, want ErrFenced", err)
	}
	if got := e.keys(t, "log/q/r/"); got != 4 {
		t.Fatalf("stale merge left %d ranges, want 4", got)
	}
	if left := e.objects(t, mergedDir+"q/"); len(left) != 1 {
		t.Fatalf("merged objects of q: %v, want 1 (the stale merge's removed)", left)
	}
	if merged, err := b.c.Merge(ctxT(t), ob["q"], "q"); err != nil || merged != 4 {
		t.Fatalf("new owner's merge: %d, %v", merged, err)
	}
}

// TestMergeRacesCommits (ranges tiling the log, merges keep the bytes, reference-counted collection): merges and collections running
// while the owner commits never lose, change or overlap a batch, nor
// delete an object a range names.
func TestMergeRacesCommits(t *testing.T) {
	e := newEnv(t, "")
	e.opts.MergeBelow = 400 // a merged range soon stops being small
	// Transactions of 2 partitions: a commit of 3 is 2 transactions, and
	// a merge of p can change the reference count of the commit's object
	// between them.
	e.opts.MaxTxnOps = 10
	n := e.node("a")
	owns := n.acquire(t, "p", "q", "r")
	stop := make(chan struct{})
	var merges, collected int
	var bgErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			m, err := n.c.Merge(ctxT(t), owns["p"], "p")
			if err != nil && !errors.Is(err, ErrConflict) {
				bgErr = err
				return
			}
			merges += m
			c, err := n.c.Collect(ctxT(t))
			if err != nil {
				bgErr = err
				return
			}
			collected += c
			// Reads see whole, checked batches all along.
			_, _, ranges, err := n.c.Log(ctxT(t), "p")
			for _, r := range ranges {
				if err == nil {
					_, err = n.c.ReadRange(ctxT(t), r)
				}
			}
			if err != nil {
				bgErr = err
				return
			}
		}
	}()
	want := commitRounds(t, n.c, owns, []string{"p", "q", "r"}, 120)
	close(stop)
	<-done
	if bgErr != nil {
		t.Fatal(bgErr)
	}
	if _, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil {
		t.Fatal(err)
	}
	ranges := e.sameBatches(t, n.c, "p", want["p"])
	e.sameBatches(t, n.c, "q", want["q"])
	e.sameBatches(t, n.c, "r", want["r"])
	if merges == 0 || len(ranges) >= 120 {
		t.Fatalf("%d ranges merged during the commits, %d ranges left", merges, len(ranges))
	}
	t.Logf("merged %d ranges while committing, %d objects collected, %d ranges left", merges, collected, len(ranges))
}

// TestMergeConcurrentTrim (merges keep the bytes, reference-counted collection): a trim between a merge's read and its
// transaction makes the merge read again: the merged range never brings
// back a trimmed range, and every reference count stays exact.
func TestMergeConcurrentTrim(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p")
	want := commitRounds(t, n.c, owns, []string{"p"}, 6)
	trimmed := false
	n.c.beforeMergeTxn = func() {
		if !trimmed {
			trimmed = true
			if err := n.c.SetStart(ctxT(t), owns["p"], "p", 3); err != nil {
				t.Error(err)
			}
		}
	}
	merged, err := n.c.Merge(ctxT(t), owns["p"], "p")
	if err != nil {
		t.Fatal(err)
	}
	start, _, _, ranges := e.readAll(t, n.c, "p")
	if start != 3 || len(ranges) != 1 || ranges[0].Base != 3 || merged != 4 {
		t.Fatalf("after a merge raced by a trim: start %d, %d ranges from %d, %d merged", start, len(ranges), ranges[0].Base, merged)
	}
	for base := range want["p"] {
		if base < 3 {
			delete(want["p"], base)
		}
	}
	e.sameBatches(t, n.c, "p", want["p"])
	if got := e.keys(t, "log/p/r/"); got != 1 {
		t.Fatalf("%d range records, want 1", got)
	}
	// The 6 commit objects have no reference left, the merged one has 1.
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 6 {
		t.Fatalf("collect: %d, %v; want 6", got, err)
	}
	if left := e.objects(t, commitsDir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	e.sameBatches(t, n.c, "p", want["p"])
}

// TestMergeAfterSessionLossDropsNoReferenceTwice (merges keep the bytes, reference-counted collection): a node that
// listed a partition's ranges and wrote their merged object, then lost
// its session while a new owner merged the same ranges, must not drop
// their objects' references a second time. Today's counts are already 0
// (the new owner took them): a merge that read them after its ranges
// would work from a stale view and try to take them below 0. The stale
// merge publishes nothing and reports no inconsistency; the new owner's
// merge stands, and the stale merge's object is gone.
func TestMergeAfterSessionLossDropsNoReferenceTwice(t *testing.T) {
	e := newEnv(t, "")
	a, b := e.node("a"), e.node("b")
	owns := a.acquire(t, "p")
	want := commitRounds(t, a.c, owns, []string{"p"}, 6)
	commits := e.objects(t, commitsDir)
	var bMerged int
	a.c.afterMergeWrite = func() {
		a.c.afterMergeWrite = nil
		if err := a.sess.Close(); err != nil { // the session is lost: its ownership goes
			t.Error(err)
		}
		var err error
		bo := b.acquire(t, "p")
		if bMerged, err = b.c.Merge(ctxT(t), bo["p"], "p"); err != nil {
			t.Errorf("the new owner's merge: %v", err)
		}
	}
	_, err := a.c.Merge(ctxT(t), owns["p"], "p")
	if err != nil && !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("the stale merge: %v; want nothing or fenced", err)
	}
	if bMerged != 6 {
		t.Fatalf("the new owner merged %d ranges, want 6", bMerged)
	}
	ranges := e.sameBatches(t, b.c, "p", want["p"])
	if len(ranges) != 1 {
		t.Fatalf("%d ranges, want the new owner's one", len(ranges))
	}
	for _, o := range commits {
		if r := e.refs(t, o); r != 0 {
			t.Fatalf("%s: %d references, want 0", o, r)
		}
	}
	if r := e.refs(t, ranges[0].Object); r != 1 {
		t.Fatalf("the merged object %s: %d references, want 1", ranges[0].Object, r)
	}
	if merged := e.objects(t, mergedDir); len(merged) != 1 {
		t.Fatalf("merged objects %v, want only the new owner's", merged)
	}
}
