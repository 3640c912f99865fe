package test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTieredTopicReadFromObjects: a topic with remote.storage.enable=true
// and local.retention.ms=0, over a file:// object store and over a real S3
// server, keeps its sealed
// segments only as objects (their local files removed); a franz-go
// consumer from offset 0 reads every record exactly and in order, most of
// them from the object store, before and after a restart. ListOffsets -4
// and -5 report the local and tiered parts.
func TestTieredTopicReadFromObjects(t *testing.T) {
	forEachObjectStore(t, testTieredTopicReadFromObjects)
}

func testTieredTopicReadFromObjects(t *testing.T, objs objectStore) {
	objects := objs.dir
	g := newGatewayWith(t, gatewayOptions{objectStoreURL: objs.url, tierInterval: 20 * time.Millisecond})
	const topic, n = "tiered", 1000
	configs := map[string]*string{
		"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("0"),
		"segment.bytes": ptr("2048"), "retention.ms": ptr("-1"),
	}
	ctx := testCtx(t)
	if resp, err := g.admin().CreateTopic(ctx, 1, 1, configs, topic); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	want := records(topic, n)
	cl := g.client()
	for i := 0; i < n; i += 10 { // one small batch each: many segments
		if err := cl.ProduceSync(ctx, want[i:i+10]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Wait (bounded) until the tier pass has uploaded and removed locally
	// every sealed segment: the earliest local offset is in the last 10%.
	raw := g.client()
	for {
		if off := listOffset(t, raw, topic, -4).Offset; off >= n*9/10 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("earliest local offset %d: not tiered before the deadline", listOffset(t, raw, topic, -4).Offset)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	latest := listOffset(t, raw, topic, -5).Offset
	if latest < n*9/10-1 {
		t.Fatalf("latest tiered offset %d", latest)
	}
	// ListOffsets v11 -6 (KIP-1023): the earliest offset pending upload
	// is the one after the latest tiered; -1 on a topic without remote
	// storage, as in Kafka. The tier pass may still be uploading the
	// last sealed segments, so the two are compared between two equal
	// readings of the latest tiered offset.
	for {
		before := listOffset(t, raw, topic, -5).Offset
		p := listOffset(t, raw, topic, -6)
		after := listOffset(t, raw, topic, -5).Offset
		if p.ErrorCode != 0 {
			t.Fatalf("earliest pending upload: error %d", p.ErrorCode)
		}
		if before == after {
			if p.Offset != after+1 {
				t.Fatalf("earliest pending upload %d, latest tiered %d", p.Offset, after)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the tier pass never paused: latest tiered %d then %d", before, after)
		}
	}
	g.createTopic("untiered", 1)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "untiered", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if p := listOffset(t, raw, "untiered", -6); p.ErrorCode != 0 || p.Offset != -1 {
		t.Fatalf("earliest pending upload without remote storage: error %d offset %d", p.ErrorCode, p.Offset)
	}
	if start := listOffset(t, raw, topic, -2).Offset; start != 0 {
		t.Fatalf("log start %d: tiering must not move it", start)
	}
	segs, nobjs := countFiles(t, filepath.Join(g.dir, "segments"), ".seg"), countFiles(t, objects, ".kgo")
	if nobjs < 10 || segs > 3 {
		t.Fatalf("%d local segment files, %d objects", segs, nobjs)
	}
	sameRecords(t, want, consumeN(t, g, topic, n))
	g.restart()
	sameRecords(t, want, consumeN(t, g, topic, n))

	// Retention over the whole log: DeleteRecords, then a retention pass
	// and a tier pass remove the objects below the new start.
	adm := kadm.NewClient(g.client())
	off := kadm.Offsets{}
	off.Add(kadm.Offset{Topic: topic, Partition: 0, At: n / 2})
	if _, err := adm.DeleteRecords(ctx, off); err != nil {
		t.Fatal(err)
	}
	if err := g.res.Passes().RunRetention(time.Now()); err != nil {
		t.Fatal(err)
	}
	for countFiles(t, objects, ".kgo") >= nobjs {
		if ctx.Err() != nil {
			t.Fatalf("%d objects after DeleteRecords, %d before", countFiles(t, objects, ".kgo"), nobjs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cons := g.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollFetches(ctx)
	if errs := fs.Errors(); len(errs) > 0 || fs.NumRecords() == 0 || fs.Records()[0].Offset != n/2 {
		t.Fatalf("after DeleteRecords: errors %v, %d records", errs, fs.NumRecords())
	}
}

func countFiles(t *testing.T, dir, suffix string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, suffix) {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRemoteStorageNeedsObjectStore: remote.storage.enable=true is
// refused with INVALID_CONFIG by a broker without object.store.url, and
// with cleanup.policy=compact by one with it (Kafka's checks).
func TestRemoteStorageNeedsObjectStore(t *testing.T) {
	for _, c := range []struct {
		url     string
		configs map[string]*string
	}{
		{"", map[string]*string{"remote.storage.enable": ptr("true")}},
		{"file://" + t.TempDir(), map[string]*string{"remote.storage.enable": ptr("true"), "cleanup.policy": ptr("compact")}},
	} {
		g := newGatewayWith(t, gatewayOptions{objectStoreURL: c.url})
		resp, err := g.admin().CreateTopic(testCtx(t), 1, 1, c.configs, "refused")
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, kerr.InvalidConfig) {
			t.Fatalf("object store %q: %v, want INVALID_CONFIG", c.url, err)
		}
	}
}

// TestObjectStoreRequiredOnceUsed: a data directory with ledgers in an
// object store does not open without object.store.url.
func TestObjectStoreRequiredOnceUsed(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{objectStoreURL: "file://" + t.TempDir(), tierInterval: 10 * time.Millisecond})
	ctx := testCtx(t)
	configs := map[string]*string{"remote.storage.enable": ptr("true"), "segment.bytes": ptr("100")}
	if resp, err := g.admin().CreateTopic(ctx, 1, 1, configs, "t"); err != nil || resp.Err != nil {
		t.Fatal(err, resp.Err)
	}
	cl := g.client()
	for i := 0; i < 5; i++ {
		if err := cl.ProduceSync(ctx, records("t", 5)[i]).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for listOffset(t, g.client(), "t", -5).Offset < 0 {
		if ctx.Err() != nil {
			t.Fatal("nothing tiered before the deadline")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	g.stop()
	_, err := server.Open(server.Config{DataDir: g.dir})
	if err == nil || !strings.Contains(err.Error(), "object.store.url is required") {
		t.Fatalf("open without the object store: %v", err)
	}
}
