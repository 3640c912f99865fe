package diskless

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/test/s3server"
)

// TestS3 (acknowledgement after PUT and commit, merges keep the bytes, reference-counted collection, checked range reads): the whole cycle on a real S3 server: commits,
// range reads, merges, collection of replaced objects and of an orphan,
// and a damaged object read as ErrCorrupt.
func TestS3(t *testing.T) {
	s := s3server.Start(t)
	e := newEnv(t, s.URL)
	n := e.node("a")
	owns := n.acquire(t, "p", "q")
	want := commitRounds(t, n.c, owns, []string{"p", "q"}, 10)
	if objs := e.objects(t, commitsDir); len(objs) != 10 {
		t.Fatalf("%d objects for 10 commits", len(objs))
	}
	for _, p := range []string{"p", "q"} {
		e.sameBatches(t, n.c, p, want[p])
		if m, err := n.c.Merge(ctxT(t), owns[p], p); err != nil || m != 10 {
			t.Fatalf("merge %s: %d, %v", p, m, err)
		}
	}
	const orphan = commitsDir + "dead-node/orphan"
	if err := e.bucket.WriteAll(ctxT(t), orphan, []byte("never published"), nil); err != nil {
		t.Fatal(err)
	}
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 10 {
		t.Fatalf("collect: %d, %v; want the 10 commit objects", got, err)
	}
	e.clock.Advance(e.opts.OrphanAge)
	if got, err := n.c.Collect(ctxT(t)); err != nil || got != 1 {
		t.Fatalf("collect of the orphan: %d, %v", got, err)
	}
	if left := e.objects(t, commitsDir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	ranges := e.sameBatches(t, n.c, "p", want["p"])
	e.sameBatches(t, n.c, "q", want["q"])
	path := filepath.Join(s.Dir, s3server.Bucket, filepath.FromSlash(ranges[0].Object))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ReadRange(ctxT(t), ranges[0]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged object: %v, want ErrCorrupt", err)
	}
}
