package etcdmeta_test

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

	"github.com/kgateway/kgateway/cluster/etcdmeta"
	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"gocloud.dev/blob/fileblob"
)

const testLog = storage.LogID(7)

func payload(off int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("entry-%06d;", off)), 40) }

// TestTierOverEtcd runs the object tier on EtcdMeta: ledgers are
// uploaded, published and read back from their objects; a pin that
// another node holds (its own EtcdMeta) keeps a retention-removed object
// (B6) until that node leaves and its pin lease goes with it.
func TestTierOverEtcd(t *testing.T) {
	s := etcdtest.Start(t)
	opts := etcdmeta.Options{Prefix: "/tier/"}
	metaA, _ := node(t, s, opts)
	metaB, _ := node(t, s, opts)

	dir := t.TempDir()
	store, err := storage.Open(filepath.Join(dir, "data"), storage.Options{TailCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	objDir := filepath.Join(dir, "objects")
	if err := os.MkdirAll(objDir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := fileblob.OpenBucket(objDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	bucket := tier.BlobBucket(b)
	tr := tier.New(store, bucket, metaA, tier.Options{Node: "node-a", Backoff: time.Millisecond})
	t.Cleanup(tr.Close)

	if err := store.CreateLog(testLog); err != nil {
		t.Fatal(err)
	}
	for l := 0; l < 3; l++ {
		for i := 0; i < 5; i++ {
			off := l*5 + i
			if _, err := store.Append(testLog, 1, payload(off), storage.AppendOptions{MaxTime: int64(off)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := store.Roll(testLog); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := tr.Sync(ctx, testLog, tier.LocalPolicy{RetentionMs: 0, RetentionBytes: -1}); err != nil {
		t.Fatal(err)
	}
	info, err := store.Info(testLog)
	if err != nil {
		t.Fatal(err)
	}
	ls := info.Ledgers
	var cands [3]tier.Object
	for i := range cands {
		if !ls[i].Offloaded {
			t.Fatalf("ledger %d not offloaded", i)
		}
		cs, err := tr.Candidates(testLog, ls[i].ID)
		if err != nil || len(cs) != 1 {
			t.Fatalf("ledger %d candidates %v, %v", i, cs, err)
		}
		cands[i] = cs[0]
		_, hdrs, err := store.LedgerEntries(testLog, ls[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		es, err := tr.Read(ctx, cs[0], hdrs)
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range es {
			if int(e.Offset) != i*5+j || !bytes.Equal(e.Payload, payload(i*5+j)) {
				t.Fatalf("ledger %d entry %d: offset %v", i, j, e.Offset)
			}
		}
	}

	// Node b reads ledger 0's object: its pin, in etcd, under b's lease.
	if err := metaB.AddPin(tier.Pin{Key: cands[0].Key, ID: "read-b", Owner: "node-b", Expires: time.Now().Add(time.Hour).UnixNano()}); err != nil {
		t.Fatal(err)
	}
	if err := store.HardTrim(testLog, ls[2].FirstOffset); err != nil {
		t.Fatal(err)
	}
	if err := tr.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	if o, err := metaA.Get(testLog, ls[0].ID); err != nil || o.State != tier.Deleting {
		t.Fatalf("object pinned by another node: %+v, %v", o, err)
	}
	if _, err := metaA.Get(testLog, ls[1].ID); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("unpinned object of a removed ledger: %v", err)
	}
	if n := countObjects(t, bucket); n != 2 {
		t.Fatalf("%d objects, want ledger 0's (pinned) and 2's", n)
	}
	if err := metaB.Close(); err != nil { // node b leaves: its lease and pins go
		t.Fatal(err)
	}
	if err := tr.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, bucket); n != 1 {
		t.Fatalf("%d objects after node b left, want 1", n)
	}
}

func countObjects(t *testing.T, b tier.Bucket) int {
	t.Helper()
	n := 0
	err := b.List(context.Background(), "", func(key string, _ int64, _ time.Time) error {
		if strings.HasSuffix(key, ".kgo") {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
