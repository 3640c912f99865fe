package tier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"github.com/kgateway/kgateway/tier/tiertest"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

const testLog = storage.LogID(7)

type env struct {
	t      testing.TB
	store  *storage.Store
	dir    string
	bucket *tiertest.Faulty
	tier   *tier.Tier
	opts   tier.Options
}

func newEnv(t testing.TB, opts tier.Options) *env { return newEnvOn(t, opts, nil) }

// newEnvOn is newEnv over bucket b (nil: a fileblob bucket in a
// temporary directory).
func newEnvOn(t testing.TB, opts tier.Options, b *blob.Bucket) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), opts: opts}
	var err error
	if e.store, err = storage.Open(filepath.Join(e.dir, "data"), storage.Options{TailCacheBytes: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	if b == nil {
		objDir := filepath.Join(e.dir, "objects")
		if err := os.MkdirAll(objDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if b, err = fileblob.OpenBucket(objDir, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
	}
	e.bucket = tiertest.NewFaulty(tier.BlobBucket(b))
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	opts.ChunkBytes = 4096
	e.opts = opts
	e.tier = tier.New(e.store, e.bucket, tier.NewPebbleMeta(e.store), opts)
	t.Cleanup(e.tier.Close)
	if err := e.store.CreateLog(testLog); err != nil {
		t.Fatal(err)
	}
	return e
}

func payload(off int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("entry-%06d;", off)), 40)
}

// fill writes ledgers of per entries each (one record per entry) and
// rolls after each, so all but the open ledger are sealed.
func (e *env) fill(ledgers, per int) {
	for l := 0; l < ledgers; l++ {
		for i := 0; i < per; i++ {
			off := l*per + i
			if _, err := e.store.Append(testLog, 1, payload(off), storage.AppendOptions{MaxTime: int64(off)}); err != nil {
				e.t.Fatal(err)
			}
		}
		if _, err := e.store.Roll(testLog); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) info() storage.LogInfo {
	info, err := e.store.Info(testLog)
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

func (e *env) headers(led storage.LedgerID) []storage.EntryHeader {
	_, hdrs, err := e.store.LedgerEntries(testLog, led)
	if err != nil {
		e.t.Fatal(err)
	}
	return hdrs
}

// readObject reads all entries of led from its published object.
func (e *env) readObject(led storage.LedgerID) ([]storage.Entry, error) {
	cands, err := e.tier.Candidates(testLog, led)
	if err != nil {
		return nil, err
	}
	if len(cands) != 1 {
		return nil, fmt.Errorf("%d candidates", len(cands))
	}
	return e.tier.Read(context.Background(), cands[0], e.headers(led))
}

func checkEntries(t *testing.T, es []storage.Entry, first int) {
	t.Helper()
	for i, en := range es {
		if int(en.Offset) != first+i || !bytes.Equal(en.Payload, payload(first+i)) {
			t.Fatalf("entry %d: offset %v, payload %.20q", i, en.Offset, en.Payload)
		}
	}
}

// TestUploadOffloadRead: a sealed ledger is uploaded and published with
// its SHA-256s, its local file removed, and its entries read back from
// the object exactly; Verify finds nothing wrong.
func TestUploadOffloadRead(t *testing.T) {
	e := newEnv(t, tier.Options{})
	e.fill(3, 20)
	if err := e.tier.Sync(context.Background(), testLog, tier.LocalPolicy{RetentionMs: 0, RetentionBytes: -1}); err != nil {
		t.Fatal(err)
	}
	info := e.info()
	for i, li := range info.Ledgers {
		sealed := i < len(info.Ledgers)-1
		if li.Offloaded != sealed {
			t.Fatalf("ledger %d offloaded=%v", i, li.Offloaded)
		}
		if !sealed {
			continue
		}
		if e.store.HasLocal(testLog, li.ID) {
			t.Fatalf("ledger %v still local", li.ID)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "data", "segments", storage.SegmentFileName(testLog, li.ID))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("local file of %v: %v", li.ID, err)
		}
		o, err := e.tier.Meta().Get(testLog, li.ID)
		if err != nil || o.State != tier.Published || len(o.FramesSHA) != 64 || len(o.IndexSHA) != 64 || o.PubID == "" {
			t.Fatalf("record %+v, %v", o, err)
		}
		es, err := e.readObject(li.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 20 {
			t.Fatalf("%d entries", len(es))
		}
		checkEntries(t, es, i*20)
	}
	rep, err := e.tier.Verify(context.Background())
	if err != nil || rep.Objects != 3 || len(rep.Problems) != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// Reopen: offloaded ledgers stay offloaded, with no file.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(filepath.Join(e.dir, "data"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info2, _ := s.Info(testLog)
	if !info2.Ledgers[0].Offloaded || s.HasLocal(testLog, info2.Ledgers[0].ID) {
		t.Fatalf("after reopen: %+v", info2.Ledgers[0])
	}
}

// TestLocalKeptUntilPublished: with local.retention 0 but an object store
// that fails every call, nothing is removed locally (B4).
func TestLocalKeptUntilPublished(t *testing.T) {
	e := newEnv(t, tier.Options{Retries: 1})
	e.fill(2, 5)
	e.bucket.FailNext(1 << 30)
	if err := e.tier.Sync(context.Background(), testLog, tier.LocalPolicy{RetentionMs: 0, RetentionBytes: 0}); err == nil {
		t.Fatal("sync with a failing store succeeded")
	}
	for _, li := range e.info().Ledgers {
		if li.Offloaded {
			t.Fatalf("%v offloaded without a published object", li.ID)
		}
	}
	if st := e.tier.Stats(); st.Retries == 0 || st.UploadFailures == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRetriesSlowDown: transient 503s are retried with backoff and the
// upload and the read still succeed.
func TestRetriesSlowDown(t *testing.T) {
	e := newEnv(t, tier.Options{Retries: 5})
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	e.bucket.FailNext(2)
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
	e.bucket.FailNext(2)
	es, err := e.readObject(led)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 0)
	if e.tier.Stats().Retries < 4 {
		t.Fatalf("retries %d", e.tier.Stats().Retries)
	}
}

// TestLyingStoreFailsClosed: an object store returning wrong or
// truncated bytes never has them served: the read fails with
// ErrCorrupt, the corrupt counter moves, and once the store tells the
// truth again the same read succeeds (nothing bad was cached).
func TestLyingStoreFailsClosed(t *testing.T) {
	for _, c := range []struct {
		name        string
		flip, trunc bool
		framesOnly  bool
	}{{"flip", true, false, false}, {"truncate", false, true, false}, {"flip-frames", true, false, true}, {"truncate-frames", false, true, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, tier.Options{Retries: 1})
			e.fill(1, 30)
			led := e.info().Ledgers[0].ID
			o, err := e.tier.Upload(context.Background(), testLog, led)
			if err != nil {
				t.Fatal(err)
			}
			if c.framesOnly { // the index reads true: each frame's own checks must catch it
				e.bucket.LieBelow(o.FramesBytes)
			}
			e.bucket.Lie(c.flip, c.trunc)
			// The entries before the bad frame are whole and checked (a
			// partial result, as R10); the bad one is never returned.
			es, err := e.readObject(led)
			if !errors.Is(err, storage.ErrCorrupt) || len(es) >= 30 {
				t.Fatalf("lying read: %d entries, %v", len(es), err)
			}
			checkEntries(t, es, 0)
			if e.tier.Stats().Corrupt == 0 {
				t.Fatal("corrupt not counted")
			}
			rep, _ := e.tier.Verify(context.Background())
			if len(rep.Problems) != 1 {
				t.Fatalf("verify of a lying store: %+v", rep)
			}
			e.bucket.Lie(false, false)
			es, err = e.readObject(led)
			if err != nil {
				t.Fatal(err)
			}
			checkEntries(t, es, 0)
		})
	}
}

// TestUploadReadBackCatchesLies: an upload whose read-back differs is
// never published (B3, B4): the record and the object are gone.
func TestUploadReadBackCatchesLies(t *testing.T) {
	e := newEnv(t, tier.Options{Retries: 1})
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	e.bucket.Lie(true, false)
	if _, err := e.tier.Upload(context.Background(), testLog, led); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("upload against a lying store: %v", err)
	}
	if _, err := e.tier.Meta().Get(testLog, led); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("record after a failed upload: %v", err)
	}
	if n := e.objectCount(); n != 0 {
		t.Fatalf("%d objects after a failed upload", n)
	}
}

func (e *env) objectCount() int {
	n := 0
	err := e.bucket.List(context.Background(), "", func(key string, _ int64, _ time.Time) error {
		if strings.HasSuffix(key, ".kgo") {
			n++
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestCrashMidUploadLeavesOrphan: a crash after the object is written but
// before it is published leaves an Uploading record and an object,
// never a published one; reads have no candidate; once the lease expires
// Reap deletes both, and a new upload publishes.
func TestCrashMidUploadLeavesOrphan(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newEnv(t, tier.Options{LeaseTTL: time.Minute, Now: func() time.Time { return now }})
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	tier.CrashAfterWrite(e.tier)
	if _, err := e.tier.Upload(context.Background(), testLog, led); err == nil {
		t.Fatal("crashed upload succeeded")
	}
	o, err := e.tier.Meta().Get(testLog, led)
	if err != nil || o.State != tier.Uploading {
		t.Fatalf("after a crash: %+v %v", o, err)
	}
	if c, _ := e.tier.Candidates(testLog, led); len(c) != 0 {
		t.Fatalf("a half upload is a candidate: %+v", c)
	}
	// A new process (the same store and bucket).
	t2 := tier.New(e.store, e.bucket, tier.NewPebbleMeta(e.store), tier.Options{LeaseTTL: time.Minute, Now: func() time.Time { return now }})
	defer t2.Close()
	if err := t2.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.objectCount() != 1 {
		t.Fatal("reaped an upload whose lease is live")
	}
	now = now.Add(2 * time.Minute)
	if err := t2.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := e.objectCount(); n != 0 {
		t.Fatalf("%d objects after reaping an expired upload", n)
	}
	if _, err := e.tier.Meta().Get(testLog, led); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("record after reaping: %v", err)
	}
	if _, err := t2.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
}

// TestOrphanObjectReaped: an object no record names is deleted once older
// than the grace period.
func TestOrphanObjectReaped(t *testing.T) {
	e := newEnv(t, tier.Options{OrphanGrace: time.Hour, Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	w, err := e.bucket.Write(context.Background(), "kgateway/0000000000000007/0000000000000001-dead.kgo")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := e.objectCount(); n != 0 || e.tier.Stats().Orphans != 1 {
		t.Fatalf("%d objects, stats %+v", n, e.tier.Stats())
	}
}

// TestRetentionDeletesUnlessPinned: objects of ledgers retention removed
// are marked deleting and deleted, except while a live pin holds one; a
// read that pinned after the mark finds its candidate stale.
func TestRetentionDeletesUnlessPinned(t *testing.T) {
	e := newEnv(t, tier.Options{})
	e.fill(3, 5)
	if err := e.tier.Sync(context.Background(), testLog, tier.LocalPolicy{RetentionMs: 0, RetentionBytes: -1}); err != nil {
		t.Fatal(err)
	}
	ls := e.info().Ledgers
	c0, _ := e.tier.Candidates(testLog, ls[0].ID)
	c1, _ := e.tier.Candidates(testLog, ls[1].ID)
	pin, err := e.tier.Pin(c0[0].Key) // a read in progress on ledger 0
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.HardTrim(testLog, ls[2].FirstOffset); err != nil {
		t.Fatal(err)
	}
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	o0, err := e.tier.Meta().Get(testLog, ls[0].ID)
	if err != nil || o0.State != tier.Deleting {
		t.Fatalf("pinned object: %+v %v", o0, err)
	}
	if _, err := e.tier.Meta().Get(testLog, ls[1].ID); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("unpinned object of a removed ledger: %v", err)
	}
	if _, err := e.tier.Read(context.Background(), c1[0], nil); !errors.Is(err, tier.ErrStale) {
		t.Fatalf("read of a deleted candidate: %v", err)
	}
	if e.objectCount() != 2 { // ledger 0's (pinned) and ledger 2's
		t.Fatalf("%d objects", e.objectCount())
	}
	e.tier.Unpin(pin)
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.objectCount() != 1 {
		t.Fatalf("%d objects after unpin", e.objectCount())
	}
	// DeleteLog: every object goes.
	if err := e.store.DeleteLog(testLog); err != nil {
		t.Fatal(err)
	}
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.objectCount() != 0 {
		t.Fatalf("%d objects after DeleteLog", e.objectCount())
	}
}

// TestSequentialReadsPrefetch: a reader whose reads follow each other
// gets the chunk after its last one fetched in the background, so its
// next read there touches no object store.
func TestSequentialReadsPrefetch(t *testing.T) {
	e := newEnv(t, tier.Options{})
	e.fill(1, 100) // 508-byte frames: 8 a 4 KiB chunk
	led := e.info().Ledgers[0].ID
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
	c, _ := e.tier.Candidates(testLog, led)
	hdrs := e.headers(led)
	for _, r := range [][2]int{{0, 5}, {5, 10}} { // chunks 0-1: sequential
		es, err := e.tier.Read(context.Background(), c[0], hdrs[r[0]:r[1]])
		if err != nil {
			t.Fatal(err)
		}
		checkEntries(t, es, r[0])
	}
	e.tier.Close() // waits for the prefetch of chunk 2
	reads := e.bucket.Reads.Load()
	es, err := e.tier.Read(context.Background(), c[0], hdrs[17:20]) // chunk 2
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 17)
	if n := e.bucket.Reads.Load() - reads; n != 0 {
		t.Fatalf("the next chunk was not prefetched: %d store reads", n)
	}
}

// TestRestartedNodeReapsItsOwnAttempt: a process of the same node (the
// same data directory) finds its predecessor's crashed attempt dead at
// once, without waiting for the lease, and uploads again.
func TestRestartedNodeReapsItsOwnAttempt(t *testing.T) {
	e := newEnv(t, tier.Options{Node: "node-a", LeaseTTL: time.Hour})
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	tier.CrashAfterWrite(e.tier)
	if _, err := e.tier.Upload(context.Background(), testLog, led); err == nil {
		t.Fatal("crashed upload succeeded")
	}
	other := tier.New(e.store, e.bucket, tier.NewPebbleMeta(e.store), tier.Options{Node: "node-b", LeaseTTL: time.Hour})
	defer other.Close()
	if _, err := other.Upload(context.Background(), testLog, led); !errors.Is(err, tier.ErrBusy) {
		t.Fatalf("another node took a live attempt over: %v", err)
	}
	again := tier.New(e.store, e.bucket, tier.NewPebbleMeta(e.store), tier.Options{Node: "node-a", LeaseTTL: time.Hour})
	defer again.Close()
	if err := again.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := e.objectCount(); n != 0 {
		t.Fatalf("%d objects after the node's restart reaped", n)
	}
	if _, err := again.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
}

// TestUploadBandwidthBound: an upload of about 50 KB at 20 KB/s (one
// second of burst) cannot finish in under a second.
func TestUploadBandwidthBound(t *testing.T) {
	e := newEnv(t, tier.Options{UploadBytesPerSec: 20 << 10})
	e.fill(1, 100)
	start := time.Now()
	o, err := e.tier.Upload(context.Background(), testLog, e.info().Ledgers[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); o.Size < 50<<10 || took < time.Second {
		t.Fatalf("%d bytes uploaded in %v at 20 KiB/s", o.Size, took)
	}
}

// TestSlowStoreTimesOut: a store slower than OpTimeout fails each call by
// its deadline, retried, and the read fails (no entries) instead of
// hanging; once the store is fast again the read succeeds.
func TestSlowStoreTimesOut(t *testing.T) {
	e := newEnv(t, tier.Options{OpTimeout: 20 * time.Millisecond, Retries: 2})
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
	e.bucket.SetDelay(time.Minute)
	es, err := e.readObject(led)
	if !errors.Is(err, context.DeadlineExceeded) || len(es) != 0 {
		t.Fatalf("read from a stuck store: %d entries, %v", len(es), err)
	}
	if e.tier.Stats().Retries < 2 {
		t.Fatalf("retries %d", e.tier.Stats().Retries)
	}
	e.bucket.SetDelay(0)
	es, err = e.readObject(led)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 0)
}

// TestCachedReadTakesNoPin (B5, B6, "Reads and R1"): a read whose index
// and chunks are all cached takes no pin (no write to the metadata) and
// reads nothing from the object store, and still serves checked entries;
// once the object is marked Deleting the same cached read is stale.
func TestCachedReadTakesNoPin(t *testing.T) {
	e := newEnv(t, tier.Options{})
	e.fill(2, 5)
	ls := e.info().Ledgers
	if err := e.tier.Sync(context.Background(), testLog, tier.LocalPolicy{RetentionMs: 0, RetentionBytes: -1}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.tier.Candidates(testLog, ls[0].ID)
	if len(c) != 1 {
		t.Fatalf("%d candidates", len(c))
	}
	hdrs := e.headers(ls[0].ID)
	es, err := e.tier.Read(context.Background(), c[0], hdrs)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 0)
	pins, reads := e.tier.Stats().Pins, e.bucket.Reads.Load()
	if pins == 0 {
		t.Fatal("a read of uncached bytes took no pin")
	}
	es, err = e.tier.Read(context.Background(), c[0], hdrs[1:4])
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 1)
	if n := e.tier.Stats().Pins - pins; n != 0 {
		t.Fatalf("a cached read took %d pins", n)
	}
	if n := e.bucket.Reads.Load() - reads; n != 0 {
		t.Fatalf("a cached read made %d store reads", n)
	}
	if err := e.store.HardTrim(testLog, ls[1].FirstOffset); err != nil {
		t.Fatal(err)
	}
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.tier.Read(context.Background(), c[0], hdrs[1:4]); !errors.Is(err, tier.ErrStale) {
		t.Fatalf("cached read of a deleted candidate: %v", err)
	}
}
