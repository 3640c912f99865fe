package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob"
)

// scrape is the value of series in s's /metrics (-1 when absent).
func scrape(t *testing.T, s *Server, series string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Metrics().Handler(s.Ready).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// readyz is s's /readyz status code and body.
func readyz(s *Server) (int, string) {
	rec := httptest.NewRecorder()
	s.Metrics().Handler(s.Ready).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String()
}

// waitFor waits until cond holds, failing the test after 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 60 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// topicID is topic's id as the cluster's Metadata names it. A node
// answers Metadata from its own view of the catalog (an etcd watch): a
// node that joined or a topic created a moment ago may be unknown there,
// answered UNKNOWN_TOPIC_OR_PARTITION with a zero id, and the placement
// of a zero id is not the topic's. So it asks until an answer names the
// topic with its id.
func topicID(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) resolver.TopicID {
	t.Helper()
	var id resolver.TopicID
	eventually(t, "metadata naming "+topic, func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		td, ok := md.Topics[topic]
		switch {
		case !ok:
			return fmt.Errorf("%s not in the metadata", topic)
		case td.Err != nil:
			return fmt.Errorf("%s: %w", topic, td.Err)
		case td.ID == kadm.TopicID{}:
			return fmt.Errorf("%s with a zero id", topic)
		}
		id = resolver.TopicID(td.ID)
		return nil
	})
	return id
}

// TestClusterReadyOnlyWhenPlaced: a cluster node's /readyz answers 503
// until it serves every partition placement gives it (rendezvous placement, rebuild before serving): a node
// that joins while its rebuilds cannot read the object store stays
// unready, naming what it waits for, and is ready once they are done;
// the partitions it was given are then led by it.
func TestClusterReadyOnlyWhenPlaced(t *testing.T) {
	const parts = 12 // some surely prefer node 2 (each with probability 1/2)
	c, cl, adm, ctx := startWithTopic(t, 1, "r", parts)
	c.waitLeaders(adm, "r", parts)
	produceN(t, ctx, cl, "r", 40)
	s1 := c.nodes[1]
	waitFor(t, "node 1 ready", func() bool { return s1.Ready() == nil })
	if code, body := readyz(s1); code != http.StatusOK {
		t.Fatalf("node 1 alone, serving everything: /readyz %d %s", code, body)
	}
	var bb *blockingBucket
	c.edit = func(cfg *Config) {
		cfg.wrapBucket = func(inner *blob.Bucket) *blob.Bucket {
			var b *blob.Bucket
			bb, b = newBlockingBucket(inner)
			bb.gate = make(chan struct{})
			bb.block.Store(true)
			return b
		}
	}
	s2 := c.start(2)
	waitFor(t, "a rebuild on node 2 reading the object store", func() bool { return bb.blocked.Load() > 0 })
	code, body := readyz(s2)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "waiting for") {
		t.Fatalf("node 2 rebuilding: /readyz %d %q, want 503 naming a partition", code, body)
	}
	if v := scrape(t, s2, "kgateway_cluster_ready"); v != 0 {
		t.Fatalf("kgateway_cluster_ready %v while rebuilding, want 0", v)
	}
	close(bb.gate)
	waitFor(t, "node 2 ready", func() bool { return s2.Ready() == nil })
	if code, body := readyz(s2); code != http.StatusOK {
		t.Fatalf("node 2 after its rebuilds: /readyz %d %s", code, body)
	}
	led := 0
	for _, l := range c.waitLeaders(adm, "r", parts) {
		if l == 2 {
			led++
		}
	}
	if served := int(scrape(t, s2, "kgateway_cluster_partitions_serving")); led == 0 || served < led {
		t.Fatalf("ready node 2 leads %d partitions and serves %d slots", led, served)
	}
}

// TestClusterMetrics: the cluster path's instruments follow its work: a
// produce is one object PUT and one etcd transaction, each timed; the
// rebuilds of the partition and the coordinator role are counted and
// timed; a commit refused because the ownership's epoch moved (a new
// owner took it) counts a fenced write, never acknowledged; gauges show what is held and
// served, and nothing left to upload.
func TestClusterMetrics(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 1, "m", 1)
	c.waitLeaders(adm, "m", 1)
	s := c.nodes[1]
	waitFor(t, "node 1 ready", func() bool { return s.Ready() == nil })
	produceN(t, ctx, cl, "m", 3)
	for _, series := range []string{"kgateway_cluster_commit_put_seconds_count", "kgateway_cluster_commit_etcd_seconds_count",
		"kgateway_cluster_commit_object_bytes_count"} {
		if v := scrape(t, s, series); v < 3 {
			t.Errorf("%s = %v after 3 produces, want at least 3", series, v)
		}
	}
	if v := scrape(t, s, `kgateway_cluster_rebuilds_total{result="ok"}`); v < 2 {
		t.Errorf("rebuilds ok = %v, want the partition's and the coordinator's", v)
	}
	if v := scrape(t, s, "kgateway_cluster_rebuild_seconds_count"); v < 2 {
		t.Errorf("rebuild_seconds_count = %v, want at least 2", v)
	}
	for series, want := range map[string]float64{"kgateway_cluster_partitions_held": 2, "kgateway_cluster_partitions_serving": 2,
		"kgateway_cluster_upload_backlog_commits": 0, "kgateway_cluster_ready": 1, "kgateway_cluster_fenced_writes_total": 0} {
		if v := scrape(t, s, series); v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
	// Another owner's epoch: the node's next commit of the partition is
	// fenced (fenced writers publish nothing) and never acknowledged.
	etcd := c.etcd.Client(t)
	md, err := adm.Metadata(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	pkey := node.PKey(resolver.TopicID(md.Topics["m"].ID), 0)
	ek := node.DefaultPrefix + "epoch/" + pkey
	cur, err := etcd.Get(ctx, ek)
	if err != nil || len(cur.Kvs) != 1 {
		t.Fatalf("epoch of %s: %v %v", pkey, cur, err)
	}
	epoch, _ := strconv.ParseUint(string(cur.Kvs[0].Value), 10, 64)
	if _, err := etcd.Put(ctx, ek, strconv.FormatUint(epoch+1, 10)); err != nil {
		t.Fatal(err)
	}
	// The client's produce is refused (NOT_LEADER_OR_FOLLOWER), the node
	// rebuilds the partition under a new epoch and the client's retry
	// lands there.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("fenced")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if v := scrape(t, s, "kgateway_cluster_fenced_writes_total"); v < 1 {
		t.Fatalf("fenced writes = %v after a fenced commit, want at least 1", v)
	}
}

// TestClusterAcquiresBesideSlowRebuild: a slot given to a node is
// acquired and served while another of its rebuilds is stuck reading the
// object store: acquisitions run apart from the placement rounds, so one
// slow rebuild (a big partition, a slow store) does not hold back the
// partitions freed after it — in a rolling restart, those handed back
// one by one to the restarted node. Here node 2 joins while every read
// of its object store waits, so its rebuilds of partitions with data
// hang; a topic created then must still be placed over both nodes, its
// partitions (empty: nothing to read) led by their preferred node.
func TestClusterAcquiresBesideSlowRebuild(t *testing.T) {
	const parts = 6
	c, _, adm, ctx := startWithTopic(t, 1, "full", parts)
	c.waitLeaders(adm, "full", parts)
	cl := c.client(kgo.DefaultProduceTopic("full"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(parts) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var bb *blockingBucket
	c.edit = func(cfg *Config) {
		cfg.wrapBucket = func(inner *blob.Bucket) *blob.Bucket {
			var b *blob.Bucket
			bb, b = newBlockingBucket(inner)
			bb.gate = make(chan struct{})
			bb.block.Store(true)
			return b
		}
	}
	c.start(2)
	full := topicID(t, ctx, adm, "full")
	stuck := 0
	for p := range int32(parts) {
		if node.Preferred(node.PKey(full, p), []int32{1, 2}) == 2 {
			stuck++
		}
	}
	if stuck == 0 {
		t.Skip("placement gives node 2 no partition of full: nothing to hold its rebuilds (probability 1/64)")
	}
	waitFor(t, "a rebuild on node 2 reading the object store", func() bool { return bb.blocked.Load() > 0 })
	defer close(bb.gate)
	if _, err := adm.CreateTopic(ctx, 12, 1, nil, "fresh"); err != nil {
		t.Fatal(err)
	}
	fresh := topicID(t, ctx, adm, "fresh")
	want := map[int32]int32{}
	for p := range int32(12) {
		want[p] = node.Preferred(node.PKey(fresh, p), []int32{1, 2})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.waitLeaders(adm, "fresh", -1)
		ok := len(got) == 12
		for p, l := range want {
			ok = ok && got[p] == l
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fresh's leaders %v, placement %v, while %d of node 2's rebuilds are stuck", got, want, bb.blocked.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bb.blocked.Load() == 0 {
		t.Fatal("node 2's rebuilds of full are no longer stuck: the test proved nothing")
	}
}

// TestClusterAbandonsRebuildOnHandback: a partition handed over by a
// node that stops, and preferred by it again when it is back before the
// new owner's rebuild is done (a rolling restart), is given back at
// once: the new owner abandons its rebuild instead of finishing it (here
// it never would: its object reads wait) and then handing the partition
// back, which would keep it from its preferred node for a whole rebuild.
func TestClusterAbandonsRebuildOnHandback(t *testing.T) {
	const parts = 6
	c, _, adm, ctx := startWithTopic(t, 1, "back", parts)
	c.waitLeaders(adm, "back", parts)
	var bb *blockingBucket
	c.edit = func(cfg *Config) {
		cfg.wrapBucket = func(inner *blob.Bucket) *blob.Bucket {
			var b *blob.Bucket
			bb, b = newBlockingBucket(inner)
			bb.gate = make(chan struct{})
			return b
		}
	}
	c.start(2)
	c.edit = nil
	back := topicID(t, ctx, adm, "back")
	want := map[int32]int32{}
	var ofNode1 []int32
	for p := range int32(parts) {
		want[p] = node.Preferred(node.PKey(back, p), []int32{1, 2})
		if want[p] == 1 {
			ofNode1 = append(ofNode1, p)
		}
	}
	if len(ofNode1) == 0 {
		t.Skip("placement gives node 1 no partition of back (probability 1/64)")
	}
	waitPlaced := func(what string) {
		t.Helper()
		waitFor(t, what, func() bool {
			got := c.waitLeaders(adm, "back", -1)
			for p, l := range want {
				if got[p] != l {
					return false
				}
			}
			return true
		})
	}
	waitPlaced("back placed over nodes 1 and 2")
	cl := c.client(kgo.DefaultProduceTopic("back"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, p := range ofNode1 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	bb.block.Store(true) // node 2's rebuilds of node 1's partitions never end
	defer close(bb.gate)
	c.stop(1)
	waitFor(t, "node 2 rebuilding node 1's partitions", func() bool { return int(bb.blocked.Load()) >= len(ofNode1) })
	c.start(1)
	adm = kadm.NewClient(c.client())
	waitPlaced("node 1's partitions back on node 1 while node 2's rebuilds of them hang")
}
