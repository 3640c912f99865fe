package diskless

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/test/s3server"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestPinnedObjectSurvivesCollect (pinned objects kept, pin revalidation) on a real S3 server: a range
// pinned before a Merge replaced it keeps its object through Collect, and
// reads the same bytes; once the pin goes, Collect takes the object. A
// pin on a range listed before the Merge is refused (ErrStale) and
// leaves no pin behind.
func TestPinnedObjectSurvivesCollect(t *testing.T) {
	s := s3server.Start(t)
	e := newEnv(t, s.URL)
	n := e.node("a")
	owns := n.acquire(t, "p")
	commitRounds(t, n.c, owns, []string{"p"}, 4)
	_, _, ranges, err := n.c.Log(ctxT(t), "p")
	if err != nil || len(ranges) != 4 {
		t.Fatalf("log: %d ranges, %v", len(ranges), err)
	}
	pinned := ranges[1]
	want, err := n.c.ReadRange(ctxT(t), pinned)
	if err != nil {
		t.Fatal(err)
	}
	unpin, err := n.c.Pin(ctxT(t), n.sess.Lease(), pinned)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil || m != 4 {
		t.Fatalf("merge: %d, %v", m, err)
	}
	// Listed before the merge: stale, and no pin is left (pin revalidation). The first
	// range's key now holds the merged range; the others' are gone.
	for _, r := range []Range{ranges[0], ranges[2]} {
		if _, err := n.c.Pin(ctxT(t), n.sess.Lease(), r); !errors.Is(err, ErrStale) {
			t.Fatalf("pin of merged range [%d, %d): %v, want ErrStale", r.Base, r.End, err)
		}
		if got := e.keys(t, "pin/"+r.Object+"\x00"); got != 0 {
			t.Fatalf("a refused pin left %d records", got)
		}
	}
	// One stale range among fresh ones: no pin at all.
	_, _, fresh, err := n.c.Log(ctxT(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.Pin(ctxT(t), n.sess.Lease(), fresh[0], ranges[3]); !errors.Is(err, ErrStale) {
		t.Fatalf("pin of a fresh and a stale range: %v, want ErrStale", err)
	}
	if got := e.keys(t, "pin/"+fresh[0].Object+"\x00"); got != 0 {
		t.Fatalf("a refused pin left %d records on the fresh range's object", got)
	}
	data, err := n.c.ReadPinned(ctxT(t), n.sess.Lease(), fresh...)
	if err != nil || len(data) != 1 || len(data[0]) != int(fresh[0].Len) {
		t.Fatalf("read of the merged range: %d ranges, %v", len(data), err)
	}
	if got := e.keys(t, "pin/"); got != 1 {
		t.Fatalf("%d pins after ReadPinned, want only the test's own", got)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 3 {
		t.Fatalf("collect with one object pinned: %d, %v; want the 3 others", got, err)
	}
	left := e.objects(t, commitsDir)
	if !slices.Equal(left, []string{pinned.Object}) {
		t.Fatalf("objects left %v, want the pinned %s", left, pinned.Object)
	}
	got, err := n.c.ReadRange(ctxT(t), pinned)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("pinned range after merge and collect: %v (same bytes: %v)", err, bytes.Equal(got, want))
	}
	if err := unpin(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect after the unpin: %d, %v; want 1", got, err)
	}
	if left := e.objects(t, commitsDir); len(left) != 0 {
		t.Fatalf("objects left after the unpin: %v", left)
	}
}

// TestPinGoesWithItsLease (pinned objects kept): a reader that dies leaves its pin only
// until its lease ends; then Collect takes the object.
func TestPinGoesWithItsLease(t *testing.T) {
	e := newEnv(t, "")
	n := e.node("a")
	owns := n.acquire(t, "p")
	commitRounds(t, n.c, owns, []string{"p"}, 2)
	_, _, ranges, err := n.c.Log(ctxT(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	// The reader's own lease: a short one, never kept alive.
	lease, err := e.cli.Grant(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.Pin(ctxT(t), lease.ID, ranges[0]); err != nil {
		t.Fatal(err)
	}
	if m, err := n.c.Merge(ctxT(t), owns["p"], "p"); err != nil || m != 2 {
		t.Fatalf("merge: %d, %v", m, err)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect while pinned: %d, %v; want 1 of 2", got, err)
	}
	// The reader is gone: its lease expires (TTL 1 s) and takes the pin.
	w := e.cli.Watch(ctxT(t), prefix+"pin/", clientv3.WithPrefix())
	for e.keys(t, "pin/") > 0 {
		select {
		case <-w:
		case <-ctxT(t).Done():
			t.Fatal("the pin outlived its lease")
		}
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect after the lease ended: %d, %v; want 1", got, err)
	}
}

// TestState (the published producer state, reference-counted collection) on a real S3 server: a state is published only by
// the owner and only within the published end; a newer one takes the
// reference from the older, which Collect then takes; a damaged object
// reads as ErrCorrupt; deleting the partition frees the last one.
func TestState(t *testing.T) {
	s := s3server.Start(t)
	e := newEnv(t, s.URL)
	n := e.node("a")
	owns := n.acquire(t, "p")
	commitRounds(t, n.c, owns, []string{"p"}, 3)
	_, end, _, _ := e.readAll(t, n.c, "p")
	if _, _, err := n.c.State(ctxT(t), "p"); !errors.Is(err, ErrNoState) {
		t.Fatalf("state before any: %v, want ErrNoState", err)
	}
	if err := n.c.PutState(ctxT(t), owns["p"], "p", end+1, []byte("x")); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("state past the end: %v, want ErrOutOfRange", err)
	}
	for i, want := range []string{"first", "second"} {
		if err := n.c.PutState(ctxT(t), owns["p"], "p", end-int64(1-i), []byte(want)); err != nil {
			t.Fatal(err)
		}
		covered, data, err := n.c.State(ctxT(t), "p")
		if err != nil || string(data) != want || covered != end-int64(1-i) {
			t.Fatalf("state %d: %q at %d, %v", i, data, covered, err)
		}
	}
	if left := e.objects(t, stateDir); len(left) != 2 {
		t.Fatalf("state objects %v, want 2 before collection", left)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect: %d, %v; want the replaced state", got, err)
	}
	left := e.objects(t, stateDir)
	if len(left) != 1 || e.refs(t, left[0]) != 1 {
		t.Fatalf("state objects %v after collection, want the current one with 1 reference", left)
	}
	// A stale owner publishes no state.
	if err := n.m.Release(ctxT(t), owns["p"]); err != nil {
		t.Fatal(err)
	}
	if err := n.c.PutState(ctxT(t), owns["p"], "p", end, []byte("stale")); !errors.Is(err, owner.ErrFenced) {
		t.Fatalf("state of a stale owner: %v, want ErrFenced", err)
	}
	path := filepath.Join(s.Dir, s3server.Bucket, filepath.FromSlash(left[0]))
	if err := os.WriteFile(path, []byte("secnod"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.c.State(ctxT(t), "p"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged state: %v, want ErrCorrupt", err)
	}
	if err := n.c.DeletePartitions(ctxT(t), []string{"p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.Collect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if left := e.objects(t, stateDir); len(left) != 0 {
		t.Fatalf("state objects %v after the partition's deletion", left)
	}
}
