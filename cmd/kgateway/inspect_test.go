package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/resolver/explain"
	"github.com/kgateway/kgateway/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchBatches issues a real franz-go Fetch of one partition and returns
// the base offsets of the batches it got back.
func fetchBatches(t *testing.T, cl *kgo.Client, topic string, id [16]byte, offset int64, maxBytes int32) []int64 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 50<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = 0, offset, maxBytes
	rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("fetch at %d: error %d", offset, p.ErrorCode)
	}
	var bases []int64
	for b := p.RecordBatches; len(b) > 0; {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatal(err)
		}
		bases = append(bases, rb.FirstOffset)
		b = b[12+int(rb.Length):]
	}
	return bases
}

func planBases(p explain.Plan) []int64 {
	var out []int64
	for _, e := range p.Entries {
		out = append(out, int64(e.Offset))
	}
	return out
}

// topicID looks the topic's id up through the admin API.
func topicID(t *testing.T, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	tds, err := kadm.NewClient(cl).ListTopics(testCtx(t), topic)
	if err != nil || tds[topic].Err != nil {
		t.Fatalf("%v %v", err, tds[topic].Err)
	}
	return tds[topic].ID
}

// explain agrees with a real Fetch: same batches at every offset (the
// start of a batch, inside one, the last, the end), under the default
// limits and a small budget, on a running and on a stopped directory.
func TestExplainAgreesWithFetch(t *testing.T) {
	dir := t.TempDir()
	g := startTest(t, dir)
	cl := newClient(t, g)
	var values []string
	for i := range 12 {
		values = append(values, strings.Repeat("v", 50+40*i))
	}
	produce(t, cl, "ex", values...)
	// Two records in one batch: a fetch at its second offset returns it.
	// Manual flushing makes them one batch; ProduceSync may send the first
	// before the second is buffered.
	batcher := newClient(t, g, kgo.ManualFlushing())
	results := make(chan error, 2)
	for _, v := range []string{"p", "q"} {
		batcher.Produce(testCtx(t), &kgo.Record{Topic: "ex", Value: []byte(v)}, func(_ *kgo.Record, err error) { results <- err })
	}
	if err := batcher.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	id := topicID(t, cl, "ex")
	limits := []explain.Limits{explain.DefaultLimits, {PartitionMaxBytes: 700, MinOne: true}}
	type key struct {
		off int64
		max int
	}
	want := map[key][]int64{}
	for _, lim := range limits {
		for _, off := range []int64{0, 3, 11, 12, 13} {
			want[key{off, lim.PartitionMaxBytes}] = fetchBatches(t, cl, "ex", id, off, int32(lim.PartitionMaxBytes))
		}
	}
	if w := want[key{13, 1 << 20}]; !slices.Equal(w, []int64{12}) {
		t.Fatalf("fetch inside the last batch: %v", w)
	}
	if w := want[key{0, 700}]; len(w) < 2 || len(w) > 4 {
		t.Fatalf("small budget returned %v", w)
	}
	check := func(phase string) {
		ro, err := storage.OpenReadOnly(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		for k, w := range want {
			lim := explain.Limits{PartitionMaxBytes: k.max, MinOne: true}
			p, err := explain.Fetch(ro, "ex", 0, storage.Offset(k.off), lim)
			if err != nil || p.Failed() != nil {
				t.Fatalf("%s: explain %v: %v %v", phase, k, err, p.Failed())
			}
			got := planBases(p)
			// Running, the view's index lags by the commits pebble has not
			// written out, but the open ledger's tail covers them
			// (storage.ReadOnly.Tail); nothing is being written now.
			if !slices.Equal(got, w) {
				t.Errorf("%s: explain %v = %v, fetch = %v (plan %+v)", phase, k, got, w, p)
			}
		}
	}
	check("running")
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	check("stopped")

	code, out, errOut := runCmd("explain", "--data-dir", dir, "ex", "0", "13")
	for _, w := range []string{"binding:  topic ex", "high-watermark 14", "floor(13) = entry at offset 12", "outcome:  read", "returns 1 batches"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("explain output lacks %q (exit %d):\n%s%s", w, code, out, errOut)
		}
	}
	code, out, _ = runCmd("explain", "--data-dir", dir, "ex", "0", "99")
	if code != 0 || !strings.Contains(out, "the fresh end check") {
		t.Errorf("explain beyond the end: exit %d\n%s", code, out)
	}
}

// inspect lists topics, ledgers and groups, on a running and a stopped
// directory.
func TestInspect(t *testing.T) {
	dir := t.TempDir()
	g := startTest(t, dir)
	cl := newClient(t, g)
	produce(t, cl, "ins", "a", "b", "c")
	offs := kadm.Offsets{}
	offs.AddOffset("ins", 0, 2, -1)
	if _, err := kadm.NewClient(cl).CommitOffsets(testCtx(t), "ig", offs); err != nil {
		t.Fatal(err)
	}
	// A transaction left open: its state and partition are listed.
	txc := newClient(t, g, kgo.TransactionalID("itx"))
	if err := txc.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, txc, "ins", "in-txn")
	// A partition nothing was written to (its ledger may have no file).
	if _, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 2, 1, nil, "empty"); err != nil {
		t.Fatal(err)
	}
	// A group member, still in the group when the server stops: its
	// persisted membership is listed.
	assigned := make(chan struct{})
	var once sync.Once
	member, err := kgo.NewClient(kgo.SeedBrokers(g.Addr().String()), kgo.ConsumerGroup("mg"), kgo.ConsumeTopics("ins"),
		kgo.ClientID("inspect-member"), kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			once.Do(func() { close(assigned) })
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close() // after the server stopped: the member is still in the group
	select {
	case <-assigned:
	case <-testCtx(t).Done():
		t.Fatal("member not assigned before the deadline")
	}
	for _, phase := range []string{"running", "stopped"} {
		if code, out, errOut := runCmd("explain", "--data-dir", dir, "empty", "1", "0"); code != 0 || !strings.Contains(out, "the empty read at the end") {
			t.Errorf("%s: explain of an empty partition: exit %d\n%s%s", phase, code, out, errOut)
		}
		if code, out, errOut := runCmd("verify", "--data-dir", dir); code != 0 {
			t.Errorf("%s: verify: exit %d\n%s%s", phase, code, out, errOut)
		}
		code, out, errOut := runCmd("inspect", "--data-dir", dir)
		for _, w := range []string{"topic ins", "partition 0", "ledger-", "group ig", "ins/0", "offset 2", "topic empty",
			"transaction itx", "state Ongoing", "partition ins/0",
			"group mg", "members at generation 1", "member inspect-member-", "client inspect-member /127.0.0.1"} {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("%s: inspect lacks %q (exit %d):\n%s%s", phase, w, code, out, errOut)
			}
		}
		if phase == "running" {
			txc.Close()
			cl.Close()
			g.Close()
		}
	}
}

// verify passes on a clean store and names an injected corruption.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	g := startTest(t, dir)
	produce(t, newClient(t, g), "vt", "one", "two", "three", "four")
	code, out, errOut := runCmd("verify", "--data-dir", dir) // running
	if code != 0 || !strings.Contains(out, "0 problems") {
		t.Fatalf("verify running: exit %d\n%s%s", code, out, errOut)
	}
	g.Close()
	code, out, errOut = runCmd("verify", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "4 entries") || !strings.Contains(errOut, "(100%)") {
		t.Fatalf("verify clean: exit %d\n%s%s", code, out, errOut)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "segments", "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-5] ^= 0x01 // inside the last entry's payload
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCmd("verify", "--data-dir", dir)
	want := "CORRUPT: log-1 ledger-1 entry-3 offset-3 file " + filepath.Base(segs[0]) + " pos "
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "crc mismatch") || !strings.Contains(out, "1 problems") {
		t.Fatalf("verify corrupt: exit %d, want 1 and %q:\n%s", code, want, out)
	}
}
