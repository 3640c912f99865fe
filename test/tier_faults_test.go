package test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/server"
	"github.com/kgateway/kgateway/tier"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// tieredGateway starts a gateway over objs with a tiered topic
// (local.retention.ms=0, small segments) and produces n records to it in
// batches of 10; it returns them.
func tieredGateway(t *testing.T, objs objectStore, topic string, n int) (*gateway, []*kgo.Record) {
	t.Helper()
	return tieredGatewayWith(t, objs, tier.Options{}, topic, n)
}

// tieredGatewayWith is tieredGateway with the object tier's options.
func tieredGatewayWith(t *testing.T, objs objectStore, to tier.Options, topic string, n int) (*gateway, []*kgo.Record) {
	t.Helper()
	g := newGatewayWith(t, gatewayOptions{objectStoreURL: objs.url, tierInterval: 20 * time.Millisecond, tier: to})
	configs := map[string]*string{
		"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("0"),
		"segment.bytes": ptr("2048"), "retention.ms": ptr("-1"),
	}
	if resp, err := g.admin().CreateTopic(testCtx(t), 1, 1, configs, topic); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	want := records(topic, n)
	produceBatches(t, g.client(), want)
	return g, want
}

// produceBatches produces rs in batches of 10 (one small batch each: many
// segments).
func produceBatches(t *testing.T, cl *kgo.Client, rs []*kgo.Record) {
	t.Helper()
	for i := 0; i < len(rs); i += 10 {
		if err := cl.ProduceSync(testCtx(t), rs[i:min(i+10, len(rs))]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitTiered waits until the earliest local offset (ListOffsets -4) of
// topic/0 is at least off: everything below it lives only in objects.
func waitTiered(t *testing.T, g *gateway, topic string, off int64) {
	t.Helper()
	cl := g.client()
	eventually(t, fmt.Sprintf("tiering below offset %d", off), func() bool { return listOffset(t, cl, topic, -4).Offset >= off })
}

// tierMetric reads the counter kgateway_<name> of srv.
func tierMetric(t *testing.T, srv *server.Server, name string) float64 {
	t.Helper()
	mfs, err := srv.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "kgateway_"+name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric kgateway_%s", name)
	return 0
}

// objectFiles lists the objects (.kgo files) under dir, sorted: by log,
// then by ledger (their names are zero-padded hex).
func objectFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".kgo") {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestTieredCorruptObjectFailsClosed: a byte flipped in the object that
// holds offset 0 (in the store, behind the tier's back) makes a fetch of
// offset 0 fail with KAFKA_STORAGE_ERROR and no records, again on a
// second fetch (nothing of the object is cached or served), counts
// kgateway_tier_corrupt_total, and leaves the other objects readable.
func TestTieredCorruptObjectFailsClosed(t *testing.T) {
	forEachObjectStore(t, func(t *testing.T, objs objectStore) {
		const topic, n = "corrupt", 300
		g, _ := tieredGateway(t, objs, topic, n)
		waitTiered(t, g, topic, n/2)
		files := objectFiles(t, objs.dir)
		if len(files) < 2 {
			t.Fatalf("%d objects", len(files))
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		b[40] ^= 1 // inside the first frame
		if err := os.WriteFile(files[0], b, 0o644); err != nil {
			t.Fatal(err)
		}
		cl := g.client()
		for i := range 2 {
			p := fetchRaw(t, cl, topic, 0, 0)
			if p.ErrorCode != kerr.KafkaStorageError.Code || len(p.RecordBatches) != 0 {
				t.Fatalf("fetch %d of a corrupt object: error %d, %d bytes of batches", i, p.ErrorCode, len(p.RecordBatches))
			}
		}
		if c := tierMetric(t, g.srv, "tier_corrupt_total"); c < 1 {
			t.Fatalf("tier_corrupt_total %v", c)
		}
		// The next object is whole: its first batch reads.
		p := fetchRaw(t, cl, topic, n/4, 0)
		bs := batchesOf(t, p.RecordBatches)
		if p.ErrorCode != 0 || len(bs) == 0 || bs[0].FirstOffset > n/4 {
			t.Fatalf("fetch of an intact object: error %d, %d batches", p.ErrorCode, len(bs))
		}
	})
}

// TestTieredS3ServerStopped: while the S3 server is stopped, produce and
// fetches of local data keep working, uploads fail and are retried
// (counted), and nothing is removed locally that is not published; once
// the server is back the uploads resume, and a consumer from offset 0
// reads every record exactly once and in order, most of them from
// objects, with one object per ledger.
func TestTieredS3ServerStopped(t *testing.T) {
	objs := newObjectStore(t, "s3")
	const topic, n = "outage", 1000
	// Few retries, so that uploads fail (not only retry) during the
	// outage, and the passes after a failed one must resume.
	g, want := tieredGatewayWith(t, objs, tier.Options{Retries: 1, Backoff: 10 * time.Millisecond}, topic, n/2)
	waitTiered(t, g, topic, n/2-100) // all but the open ledger
	cl := g.client()

	objs.srv.Stop()
	uploaded := len(objectFiles(t, objs.dir))
	failures := tierMetric(t, g.srv, "tier_upload_failures_total")
	more := records(topic, n)[n/2:]
	for i, r := range more {
		r.Value = []byte(fmt.Sprintf("outage-%d", i))
	}
	produceBatches(t, cl, more)
	want = append(want, more...)
	eventually(t, "failed uploads while the server is stopped", func() bool {
		return tierMetric(t, g.srv, "tier_upload_failures_total") > failures
	})
	// Local data is still served: the records produced during the outage
	// read back from their local files.
	local := listOffset(t, cl, topic, -4).Offset
	if local > n/2 {
		t.Fatalf("earliest local offset %d during the outage: unpublished ledgers removed", local)
	}
	for off := int64(n / 2); off < n; {
		p := fetchRaw(t, cl, topic, off, 0)
		bs := batchesOf(t, p.RecordBatches)
		if p.ErrorCode != 0 || len(bs) == 0 {
			t.Fatalf("fetch of local offset %d during the outage: error %d, %d batches", off, p.ErrorCode, len(bs))
		}
		off = bs[len(bs)-1].FirstOffset + int64(bs[len(bs)-1].LastOffsetDelta) + 1
	}
	if got := len(objectFiles(t, objs.dir)); got != uploaded {
		t.Fatalf("%d objects during the outage, %d before", got, uploaded)
	}

	objs.srv.Restart()
	waitTiered(t, g, topic, n-100)
	eventually(t, "one object per ledger", func() bool { return duplicateObjects(t, objs.dir) == "" })
	sameRecords(t, want, consumeN(t, g, topic, n))
	if r := tierMetric(t, g.srv, "tier_retries_total"); r < 1 {
		t.Fatalf("tier_retries_total %v", r)
	}
}

// TestTieredFetchWhileS3Stopped: with the S3 server stopped, kgateway
// restarts (its shutdown does not retry deletes against the dead store),
// a fetch of data that lives only in the object store answers within the
// request's deadline with KAFKA_STORAGE_ERROR and no records (the tier's
// ReadTimeout; unbounded, the tier's and the SDK's retries took longer
// than a client waits), a fetch of local data succeeds, and once the
// server is back a consumer reads every record.
func TestTieredFetchWhileS3Stopped(t *testing.T) {
	objs := newObjectStore(t, "s3")
	const topic, n = "remote-down", 400
	g, want := tieredGateway(t, objs, topic, n)
	waitTiered(t, g, topic, n-100)
	objs.srv.Stop()
	g.restart() // nothing of the objects cached
	cl := g.client()
	p := fetchRaw(t, cl, topic, 0, 0)
	if p.ErrorCode != kerr.KafkaStorageError.Code || len(p.RecordBatches) != 0 {
		t.Fatalf("fetch of offset 0 with the store down: error %d, %d bytes of batches", p.ErrorCode, len(p.RecordBatches))
	}
	local := listOffset(t, cl, topic, -4).Offset
	if p := fetchRaw(t, cl, topic, local, 0); p.ErrorCode != 0 || len(batchesOf(t, p.RecordBatches)) == 0 {
		t.Fatalf("fetch of local offset %d with the store down: error %d", local, p.ErrorCode)
	}
	objs.srv.Restart()
	sameRecords(t, want, consumeN(t, g, topic, n))
}
