package diskless

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/owner"
)

// TestSetStart (fenced writers publish nothing, reference-counted collection): moving the start deletes the range records wholly
// below it and their references, keeps a range that straddles it, never
// moves back, refuses a start past the end, and is fenced.
func TestSetStart(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p")
	for base := int64(0); base < 50; base += 10 {
		allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", base, 10)}, owns))
	}
	objs := e.objects(t, commitsDir)
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 25); err != nil {
		t.Fatal(err)
	}
	start, end, _, ranges := e.readAll(t, n.c, "p")
	if start != 25 || end != 50 || len(ranges) != 3 || ranges[0].Base != 20 || e.keys(t, "log/p/r/") != 3 {
		t.Fatalf("after SetStart(25): [%d, %d) in %d ranges from %d", start, end, len(ranges), ranges[0].Base)
	}
	for i, o := range objs {
		if want := int64(min(i/2, 1)); e.refs(t, o) != want {
			t.Fatalf("%s: %d references, want %d", o, e.refs(t, o), want)
		}
	}
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 10); err != nil {
		t.Fatal(err)
	}
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 51); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("start past the end: %v", err)
	}
	if start, _, _, _ := e.readAll(t, n.c, "p"); start != 25 {
		t.Fatalf("start %d, want 25", start)
	}
	if err := n.m.Release(ctxT(t), owns["p"]); err != nil {
		t.Fatal(err)
	}
	ob := e.node("b").acquire(t, "p")
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 40); !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("stale SetStart: %v, want ErrFenced", err)
	}
	if start, _, _, ranges := e.readAll(t, n.c, "p"); start != 25 || len(ranges) != 3 {
		t.Fatalf("stale SetStart moved the log: start %d, %d ranges", start, len(ranges))
	}
	if err := n.c.SetStart(ctxT(t), ob["p"], "p", 50); err != nil {
		t.Fatal(err)
	}
	if start, end, _, ranges := e.readAll(t, n.c, "p"); start != 50 || end != 50 || len(ranges) != 0 || e.keys(t, "log/p/r/") != 0 {
		t.Fatalf("after SetStart(end): [%d, %d), %d ranges", start, end, len(ranges))
	}
}

// TestManyRangesTrimmed: a start above more ranges than one transaction
// deletes takes several, and a trim or delete interrupted leaves no
// record below the start visible.
func TestManyRangesTrimmed(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	for base := range int64(150) {
		allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", base, 1), batch("q", base, 1)}, owns))
	}
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 140); err != nil {
		t.Fatal(err)
	}
	if got := e.keys(t, "log/p/r/"); got != 10 {
		t.Fatalf("%d ranges left, want 10", got)
	}
	if err := n.c.DeletePartitions(ctxT(t), []string{"q", "p"}); err != nil {
		t.Fatal(err)
	}
	if got := e.keys(t, "log/"); got != 0 {
		t.Fatalf("%d keys left after deleting the partitions", got)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 150 {
		t.Fatalf("collect: %d, %v; want 150", got, err)
	}
	if got := e.keys(t, "obj/"); got != 0 {
		t.Fatalf("%d object records left", got)
	}
}

// TestCollect (reference-counted collection): Collect deletes an object once no range references it
// and never while one does; an orphan (written, never published) once
// older than OrphanAge; and a writer that publishes after its object was
// taken for an orphan publishes nothing.
func TestCollect(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 0, 1)}, owns))
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 1, 1), batch("q", 0, 1)}, owns))
	allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", 2, 1)}, owns))
	objs := e.objects(t, commitsDir)
	const orphan = commitsDir + "dead-node/orphan"
	if err := e.bucket.WriteAll(ctxT(t), orphan, []byte("never published"), nil); err != nil {
		t.Fatal(err)
	}
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 2); err != nil {
		t.Fatal(err)
	}
	// objs[0] has no reference left; objs[1] still has q's; the orphan is young.
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect: %d, %v; want 1", got, err)
	}
	left := e.objects(t, commitsDir)
	if !slices.Equal(left, []string{objs[1], objs[2], orphan}) {
		t.Fatalf("objects %v", left)
	}
	e.clock.Advance(e.opts.OrphanAge)
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect of an old orphan: %d, %v; want 1", got, err)
	}
	if left := e.objects(t, commitsDir); len(left) != 2 {
		t.Fatalf("objects %v", left)
	}
	e.readAll(t, n.c, "p")
	e.readAll(t, n.c, "q")
	// A commit slower than OrphanAge: another node's Collect takes its
	// object between the PUT and the transaction, and the commit fails.
	slow := e.opts
	slow.Now = time.Now // its own clock, not advanced
	slowC := New(e.cli, n.m, e.bucket, prefix, "a", slow)
	slowC.beforeChunk = func(int) {
		if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
			t.Errorf("collect of the slow commit's object: %d, %v", got, err)
		}
	}
	res := slowC.Commit(ctxT(t), []Batch{batch("p", 3, 1)}, owns)
	if !errors.Is(res["p"], ErrObjectGone) {
		t.Fatalf("commit of a collected object: %v, want ErrObjectGone", res["p"])
	}
	if _, end, _, _ := e.readAll(t, n.c, "p"); end != 3 {
		t.Fatalf("p: end %d, want 3", end)
	}
	// Tombstones go after another OrphanAge.
	if got := e.keys(t, "obj/"); got != 4 {
		t.Fatalf("%d object records, want 4 (2 objects, 2 tombstones)", got)
	}
	e.clock.Advance(e.opts.OrphanAge)
	if _, err := n.c.Collect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.keys(t, "obj/"); got != 2 {
		t.Fatalf("%d object records, want 2", got)
	}
	// A writer that outlived OrphanAge itself gives up.
	late := New(e.cli, n.m, e.bucket, prefix, "a", e.opts)
	late.beforeChunk = func(int) { e.clock.Advance(e.opts.OrphanAge) }
	if res := late.Commit(ctxT(t), []Batch{batch("p", 3, 1)}, owns); !errors.Is(res["p"], ErrObjectGone) {
		t.Fatalf("late commit: %v, want ErrObjectGone", res["p"])
	}
}

// TestSetStartWhileMerged (merges keep the bytes, reference-counted collection): the owner's own merge (its upkeep)
// replaces the ranges a DeleteRecords' SetStart listed, before SetStart
// reads their objects' counts. Those counts are already 0; SetStart must
// not take them for an inconsistency (a storage error to the client) but
// see that its ranges changed and start again from the merged one.
func TestSetStartWhileMerged(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p")
	for base := int64(0); base < 50; base += 10 {
		allOK(t, n.c.Commit(ctxT(t), []Batch{batch("p", base, 10)}, owns))
	}
	merges := 0
	n.c.beforeRemoveCounts = func() {
		if merges > 0 {
			return
		}
		merges++
		if m, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil || m != 5 {
			t.Errorf("the merge: %d ranges, %v; want 5", m, err)
		}
	}
	if err := n.c.SetStart(ctxT(t), owns["p"], "p", 25); err != nil {
		t.Fatalf("SetStart(25) while the ranges are merged: %v", err)
	}
	if merges != 1 {
		t.Fatalf("SetStart listed no range to remove: the merge never ran")
	}
	start, end, _, ranges := e.readAll(t, n.c, "p")
	if start != 25 || end != 50 || len(ranges) != 1 || ranges[0].Base != 0 {
		t.Fatalf("after SetStart(25): [%d, %d) in %d ranges", start, end, len(ranges))
	}
	if r := e.refs(t, ranges[0].Object); r != 1 {
		t.Fatalf("the merged object: %d references, want 1", r)
	}
}
