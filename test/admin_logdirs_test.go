package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logDirSizes is DescribeLogDirs' answer for every partition: the log
// dir it names and each partition's size ("topic-p").
func logDirSizes(t *testing.T, cl *kgo.Client) (string, map[string]int64) {
	t.Helper()
	resp := request[*kmsg.DescribeLogDirsResponse](t, cl, kmsg.NewPtrDescribeLogDirsRequest())
	if resp.ErrorCode != 0 || len(resp.Dirs) != 1 || resp.Dirs[0].ErrorCode != 0 {
		t.Fatalf("DescribeLogDirs: %+v", resp)
	}
	sizes := map[string]int64{}
	for _, tp := range resp.Dirs[0].Topics {
		for _, p := range tp.Partitions {
			sizes[fmt.Sprintf("%s-%d", tp.Topic, p.Partition)] = p.Size
		}
	}
	return resp.Dirs[0].Dir, sizes
}

// segmentBytes is the bytes of the segment files of a partition's log in
// the data directory.
func (g *gateway) segmentBytes(topic string, partition int32) int64 {
	g.t.Helper()
	log, err := g.res.Replicas().LogOf(topic, partition)
	if err != nil {
		g.t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(g.dir, "segments", fmt.Sprintf("%016x-*.seg", uint64(log))))
	if err != nil {
		g.t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			g.t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// DescribeLogDirs names the data directory as the log dir and gives each
// partition the bytes of its segment files on disk, several segments
// each.
func TestDescribeLogDirsSizesAreSegmentFiles(t *testing.T) {
	g := newGateway(t)
	const topic = "logdirs"
	ctx := testCtx(t)
	if resp, err := g.admin().CreateTopic(ctx, 3, 1, map[string]*string{"segment.bytes": ptr("1024")}, topic); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	cl := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 60 {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2 * 2), Value: []byte(fmt.Sprintf("record %03d with some bytes", i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir, sizes := logDirSizes(t, g.client())
	if abs, _ := filepath.Abs(g.dir); dir != abs {
		t.Errorf("log dir %q, want %q", dir, abs)
	}
	for p := range int32(3) {
		key := fmt.Sprintf("%s-%d", topic, p)
		want := g.segmentBytes(topic, p)
		if sizes[key] != want || (p != 1) != (want > 1024) {
			t.Errorf("%s: size %d, segment files %d", key, sizes[key], want)
		}
	}
}

// A tiered partition's size is its local segment files only: the
// ledgers offloaded to the object store are left out, as Kafka reports a
// tiered log's local part.
func TestDescribeLogDirsTieredIsLocalOnly(t *testing.T) {
	objs := newObjectStore(t, "file")
	g := newGatewayWith(t, gatewayOptions{objectStoreURL: objs.url, tierInterval: 20 * time.Millisecond})
	const topic, n = "tiered-logdirs", 300
	configs := map[string]*string{"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("0"),
		"segment.bytes": ptr("2048"), "retention.ms": ptr("-1")}
	ctx := testCtx(t)
	if resp, err := g.admin().CreateTopic(ctx, 1, 1, configs, topic); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	want := records(topic, n)
	cl := g.client()
	for i := 0; i < n; i += 10 {
		if err := cl.ProduceSync(ctx, want[i:i+10]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	raw := g.client()
	for listOffset(t, raw, topic, -4).Offset < n/2 { // most sealed segments offloaded
		if ctx.Err() != nil {
			t.Fatal("not tiered before the deadline")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	// The tier may offload another segment between the two looks: look
	// again until they agree (bounded by ctx). Counting offloaded ledgers
	// would keep the size above the files for ever.
	for {
		before := g.segmentBytes(topic, 0)
		_, sizes := logDirSizes(t, raw)
		got := sizes[topic+"-0"]
		if got == before && got == g.segmentBytes(topic, 0) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("size %d, local segment files %d", got, before)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	if countFiles(t, objs.dir, ".kgo") == 0 {
		t.Error("nothing offloaded")
	}
}

// UpdateFeatures' levels are kept in the data directory: a restart serves
// them.
func TestUpdateFeaturesSurvivesRestart(t *testing.T) {
	g := newGateway(t)
	upd := kmsg.NewPtrUpdateFeaturesRequest()
	upd.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: "transaction.version", MaxVersionLevel: 1, UpgradeType: 2}}
	if resp := request[*kmsg.UpdateFeaturesResponse](t, g.client(), upd); resp.ErrorCode != 0 {
		t.Fatalf("update: %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
	g.restart()
	av := kmsg.NewPtrApiVersionsRequest()
	av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
	resp := request[*kmsg.ApiVersionsResponse](t, g.client(), av)
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "transaction.version" && f.MaxVersionLevel == 1 && resp.FinalizedFeaturesEpoch == 2 {
			return
		}
	}
	t.Errorf("after a restart: finalized %+v epoch %d, want transaction.version 1 at epoch 2", resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
}
