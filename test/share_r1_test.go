package test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfscount"
	"github.com/kgateway/kgateway/storage/vfstest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestShareFetchWritesNothingToTheLedger: R1 (a read writes nothing) holds
// under share fetches (cursorless share reads, share state is group state). Two share consumers
// acquire, and accept, every record of a partition; meanwhile not one
// byte is written, synced, created or removed in the segment files or the
// storage index, while the offsets store, where the share state lives,
// is written.
func TestShareFetchWritesNothingToTheLedger(t *testing.T) {
	segs := vfstest.NewFaultFS(storage.OSFS())
	var indexWrites, offsetWrites atomic.Int64
	dir := t.TempDir()
	srv := startServer(t, server.Config{
		DataDir: dir,
		Listen:  "127.0.0.1:0",
		// No journal: its files are filled in the background after Open,
		// which would count as writes here.
		Storage:  storage.Options{FS: segs, PebbleFS: vfscount.New(vfs.Default, &indexWrites), JournalBytes: -1},
		Offsets:  offsets.Options{PebbleFS: vfscount.New(vfs.Default, &offsetWrites)},
		Resolver: resolver.Config{NumPartitions: 1, AutoCreate: true},
	})
	t.Cleanup(func() { srv.Close() })
	addr := srv.Addr().String()

	const topic, group, n = "r1", "r1-group", 200
	(&gateway{t: t, addr: addr}).createTopic(topic, 1)
	produceNumbered(t, addr, topic, n)
	setGroupConfigs(t, addr, group, share.ConfigAutoOffsetReset, "earliest")

	// The produce's background work (its group commit's index batch,
	// pebble's own) ends first: the ledger is quiet for half a second.
	ledger := func() int64 { return segs.Mutations() + indexWrites.Load() }
	quietSince, last := time.Now(), ledger()
	waitFor(t, "the ledger quiet after the produce", func() bool {
		if n := ledger(); n != last {
			quietSince, last = time.Now(), n
		}
		return time.Since(quietSince) > 500*time.Millisecond
	})
	ledgerBefore, offsetsBefore := ledger(), offsetWrites.Load()
	l := newShareLedger()
	ctx, cancel := context.WithCancel(context.Background())
	accept := func(int, *kgo.Record) kgo.AckStatus { return kgo.AckAccept }
	a := runShareMember(ctx, t, addr, group, topic, "a", l, accept)
	b := runShareMember(ctx, t, addr, group, topic, "b", l, accept)
	waitFor(t, "every record accepted", func() bool { return l.acceptedAll(n) })
	cancel()
	a.Wait()
	b.Wait()
	waitFor(t, "the start offset past the last record", func() bool { return shareOffset(t, addr, group, topic) == n })

	if got := ledger(); got != ledgerBefore {
		t.Errorf("share fetches wrote to the ledger: %d mutations of segment files and index, want none", got-ledgerBefore)
	}
	if offsetWrites.Load() == offsetsBefore {
		t.Error("the offsets store was not written: where is the share state?")
	}
	t.Logf("offsets store mutations during share consumption: %d (data dir %s)", offsetWrites.Load()-offsetsBefore, filepath.Base(dir))
}
