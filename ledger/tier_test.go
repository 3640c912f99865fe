package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"github.com/kgateway/kgateway/tier/tiertest"
	"gocloud.dev/blob/fileblob"
)

// tierEnv is a managed ledger whose sealed ledgers live in a file://
// object store behind a fault-injecting bucket.
type tierEnv struct {
	store  *storage.Store
	bucket *tiertest.Faulty
	tier   *tier.Tier
	m      *Managed
}

func newTierEnv(t *testing.T) *tierEnv {
	t.Helper()
	dir := t.TempDir()
	s, err := storage.Open(filepath.Join(dir, "data"), storage.Options{TailCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	objs := filepath.Join(dir, "objects")
	if err := os.MkdirAll(objs, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.OpenBucket(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	e := &tierEnv{store: s, bucket: tiertest.NewFaulty(tier.BlobBucket(b))}
	e.tier = tier.New(s, e.bucket, tier.NewPebbleMeta(s), tier.Options{Retries: 1})
	t.Cleanup(e.tier.Close)
	if e.m, err = Open(s, testLog, Config{SegmentBytes: 2000, Tier: e.tier}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := e.m.Append(1, tierPayload(i), storage.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.tier.Sync(context.Background(), testLog, tier.LocalPolicy{RetentionMs: 0, RetentionBytes: -1}); err != nil {
		t.Fatal(err)
	}
	return e
}

func tierPayload(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "p%04d", i), 40) }

func checkRead(t *testing.T, es []Entry, from int) {
	t.Helper()
	for i, en := range es {
		if int(en.Offset) != from+i || !bytes.Equal(en.Payload, tierPayload(from+i)) {
			t.Fatalf("entry %d at %v: %.12q", i, en.Offset, en.Payload)
		}
	}
}

// TestReadFromObjectTarget: ReadFrom reads offloaded ledgers from their
// objects, across ledgers and into the local open ledger, exactly; a read
// at the tail (the open ledger, local) makes no object-store call.
func TestReadFromObjectTarget(t *testing.T) {
	e := newTierEnv(t)
	info, _ := e.store.Info(testLog)
	if len(info.Ledgers) < 4 || !info.Ledgers[0].Offloaded || e.store.HasLocal(testLog, info.Ledgers[0].ID) {
		t.Fatalf("ledgers %+v", info.Ledgers)
	}
	sn, es, err := e.m.ReadEntries(Committed, 0, NoLimit, 100, 1<<20, nil)
	if err != nil || len(es) != 40 || sn.End != 40 {
		t.Fatalf("read %d entries, end %v: %v", len(es), sn.End, err)
	}
	checkRead(t, es, 0)
	calls := e.bucket.Calls.Load()
	open := info.Ledgers[len(info.Ledgers)-1].FirstOffset
	if _, es, err = e.m.ReadEntries(Committed, open, NoLimit, 100, 1<<20, nil); err != nil || len(es) == 0 {
		t.Fatalf("tail read: %d entries, %v", len(es), err)
	}
	checkRead(t, es, int(open))
	if _, es, _ = e.m.ReadEntries(Committed, 40, NoLimit, 100, 1<<20, nil); len(es) != 0 { // a long poll's read at the end
		t.Fatalf("%d entries at the end", len(es))
	}
	if n := e.bucket.Calls.Load() - calls; n != 0 {
		t.Fatalf("reads of the local tail made %d object-store calls", n)
	}
}

// TestReadFromCorruptObjectFailsClosed: a store returning wrong bytes for
// an offloaded ledger's frames makes the read fail with storage's
// ErrCorrupt (KAFKA_STORAGE_ERROR above), never serving them.
func TestReadFromCorruptObjectFailsClosed(t *testing.T) {
	e := newTierEnv(t)
	o, err := e.tier.Meta().Get(testLog, mustLedgers(t, e.store)[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	e.bucket.LieBelow(o.FramesBytes)
	e.bucket.Lie(true, false)
	// The entries before the bad frame are served (R10), checked; the
	// read from the bad one fails.
	_, es, err := e.m.ReadEntries(Committed, 0, NoLimit, 100, 1<<20, nil)
	if err != nil || int64(len(es)) >= o.Entries {
		t.Fatalf("read up to a corrupt frame: %d entries, %v", len(es), err)
	}
	checkRead(t, es, 0)
	_, es, err = e.m.ReadEntries(Committed, Offset(len(es)), NoLimit, 100, 1<<20, nil)
	if !errors.Is(err, storage.ErrCorrupt) || len(es) != 0 {
		t.Fatalf("read of a corrupt frame: %d entries, %v", len(es), err)
	}
}

// TestReadFromStaleCandidateRetries: an object deleted (its record gone)
// between listing and pinning is stale; with the ledger trimmed too, the
// read starts again from a fresh snapshot and reports the new start.
func TestReadFromStaleCandidateRetries(t *testing.T) {
	e := newTierEnv(t)
	ls := mustLedgers(t, e.store)
	if err := e.store.HardTrim(testLog, ls[1].FirstOffset); err != nil {
		t.Fatal(err)
	}
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	sn, es, err := e.m.ReadEntries(Committed, ls[1].FirstOffset, NoLimit, 100, 1<<20, nil)
	if err != nil || sn.Start != ls[1].FirstOffset || len(es) == 0 {
		t.Fatalf("after retention: start %v, %d entries, %v", sn.Start, len(es), err)
	}
	checkRead(t, es, int(ls[1].FirstOffset))
}

func mustLedgers(t *testing.T, s *storage.Store) []storage.LedgerInfo {
	t.Helper()
	info, err := s.Info(testLog)
	if err != nil {
		t.Fatal(err)
	}
	return info.Ledgers
}
