package server

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// testCluster is N in-process nodes over one embedded etcd and one
// file:// bucket.
type testCluster struct {
	t      *testing.T
	etcd   *etcdtest.Server
	bucket string
	mu     sync.Mutex
	nodes  map[int32]*Server
	dirs   map[int32]string
	// edit, when set, changes each node's configuration before it opens.
	edit func(*Config)
}

func newTestCluster(t *testing.T) *testCluster {
	return &testCluster{t: t, etcd: etcdtest.Start(t),
		bucket: (&url.URL{Scheme: "file", Path: t.TempDir()}).String(),
		nodes:  map[int32]*Server{}, dirs: map[int32]string{}}
}

// start opens and serves node id (again, after stop: over its old
// directory, which it empties).
func (c *testCluster) start(id int32) *Server {
	c.t.Helper()
	dir, ok := c.dirs[id]
	if !ok {
		dir = c.t.TempDir()
		c.dirs[id] = dir
	}
	cfg := Config{
		DataDir: dir, Listen: "127.0.0.1:0", ObjectStoreURL: c.bucket,
		Cluster: &node.Config{NodeID: id, Endpoints: []string{c.etcd.Endpoint()},
			SessionTimeout: time.Second, Tick: 50 * time.Millisecond},
		Kafka:  kafkaConfigFor(id),
		Logger: testLogger(c.t, id),
	}
	if c.edit != nil {
		c.edit(&cfg)
	}
	s, err := Open(cfg)
	if err != nil {
		c.t.Fatalf("node %d: %v", id, err)
	}
	go s.Serve()
	c.mu.Lock()
	c.nodes[id] = s
	c.mu.Unlock()
	c.t.Cleanup(func() { c.stop(id) })
	return s
}

// stop closes node id gracefully (it hands its partitions over, graceful handover).
func (c *testCluster) stop(id int32) {
	c.mu.Lock()
	s := c.nodes[id]
	delete(c.nodes, id)
	c.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

func (c *testCluster) seeds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.nodes {
		out = append(out, s.Addr().String())
	}
	return out
}

func (c *testCluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.seeds()...),
		kgo.RetryTimeout(60 * time.Second), kgo.MetadataMinAge(50 * time.Millisecond)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// waitLeaders waits until every partition of topic (parts of them; -1:
// any) has a leader and returns the leaders.
func (c *testCluster) waitLeaders(adm *kadm.Client, topic string, parts int) map[int32]int32 {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		md, err := adm.Metadata(ctx, topic)
		cancel()
		leaders := map[int32]int32{}
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil {
				for _, p := range td.Partitions {
					if p.Err == nil && p.Leader >= 0 {
						leaders[p.Partition] = p.Leader
					}
				}
			}
		}
		if len(leaders) == parts || parts < 0 && len(leaders) > 0 {
			return leaders
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("partitions of %s without a leader: have %v (err %v)", topic, leaders, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// initProducer is an idempotent producer id and epoch from the cluster.
func initProducer(t *testing.T, ctx context.Context, cl *kgo.Client) *kmsg.InitProducerIDResponse {
	t.Helper()
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionTimeoutMillis = -1
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %v", err, ir)
	}
	return ir
}

// startWithTopic starts nodes 1..n, each configuration changed by edit
// if given, and creates topic with parts partitions through a client
// that produces to it by default.
func startWithTopic(t *testing.T, n int32, topic string, parts int32, edit ...func(*Config)) (*testCluster, *kgo.Client, *kadm.Client, context.Context) {
	t.Helper()
	c := newTestCluster(t)
	if len(edit) > 0 {
		c.edit = edit[0]
	}
	for id := int32(1); id <= n; id++ {
		c.start(id)
	}
	cl := c.client(kgo.DefaultProduceTopic(topic), produceByName())
	adm := kadm.NewClient(cl)
	ctx := testCtx(t)
	waitBrokers(t, ctx, adm, int(n))
	live := make([]int32, 0, n)
	for id := int32(1); id <= n; id++ {
		live = append(live, id)
	}
	c.waitCoordinatorAt(adm, node.Preferred(node.CoordinatorKey, live))
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	return c, cl, adm, ctx
}

// waitBrokers waits until Metadata lists n brokers three answers in a
// row: a topic created before every node has joined would be placed on
// the nodes that had (on a quiet machine the first node could take every
// partition).
func waitBrokers(t *testing.T, ctx context.Context, adm *kadm.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for seen := 0; seen < 3; {
		bs, err := adm.ListBrokers(ctx)
		if err == nil && len(bs) == n {
			seen++
			continue
		}
		seen = 0
		if time.Now().After(deadline) {
			t.Fatalf("%d brokers listed, want %d: %v", len(bs), n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestClusterProduceFetchAcrossNodes(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 3, "t", 6)
	leaders := c.waitLeaders(adm, "t", 6)
	spread := map[int32]bool{}
	for _, l := range leaders {
		spread[l] = true
	}
	if len(spread) < 2 {
		t.Errorf("6 partitions all on %v: placement does not spread", leaders)
	}
	var want []string
	want = append(want, produceN(t, ctx, cl, "v", 300)...)
	checkConsumed(t, c, "t", want)
}

// TestClusterFailoverKeepsAcknowledged: when a node stops, the others
// take its partitions over and serve every acknowledged record, rebuilt
// from the published copy (rebuild before serving). (A kill -9, where the node's session has
// to end first, is test/cluster's.)
func TestClusterFailoverKeepsAcknowledged(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 3, "f", 3)
	leaders := c.waitLeaders(adm, "f", 3)
	var want []string
	want = append(want, produceN(t, ctx, cl, "a", 90)...)
	victim := leaders[0]
	c.stop(victim)
	want = append(want, produceN(t, ctx, cl, "b", 90)...)
	after := c.waitLeaders(adm, "f", 3)
	for p, l := range after {
		if l == victim {
			t.Fatalf("partition %d still led by the stopped node %d", p, victim)
		}
	}
	checkConsumed(t, c, "f", want)
}

// TestClusterNotLeader: a produce sent to a node that does not own the
// partition is refused with NOT_LEADER_OR_FOLLOWER and writes nothing.
func TestClusterNotLeader(t *testing.T) {
	c, _, adm, ctx := startWithTopic(t, 2, "n", 1)
	leader := c.waitLeaders(adm, "n", 1)[0]
	other := int32(1)
	if leader == 1 {
		other = 2
	}
	c.mu.Lock()
	addr := c.nodes[other].Addr().String()
	c.mu.Unlock()
	direct, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), produceByName())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	// The follower learns the leader from its watch, a moment after the
	// leader claims the partition; until then it names none (-1), as a
	// Kafka broker with stale metadata does. Ask once it knows.
	eventually(t, "the follower names the leader", func() error {
		md := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("n")
		md.Topics = append(md.Topics, mt)
		r, err := md.RequestWith(ctx, direct.Broker(int(other)))
		if err != nil {
			return err
		}
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return fmt.Errorf("metadata %+v", r.Topics)
		}
		if got := r.Topics[0].Partitions[0].Leader; got != leader {
			return fmt.Errorf("node %d names leader %d, want %d", other, got, leader)
		}
		return nil
	})
	// A client follows Metadata to the leader; a request to one broker
	// pins the wrong node.
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "n"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = oneRecordBatch()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, direct.Broker(int(other)))
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to a follower: error code %d, want NOT_LEADER_OR_FOLLOWER", got.ErrorCode)
	}
	if resp.Version >= 10 && got.CurrentLeader.LeaderID != leader {
		t.Errorf("current leader %d in the answer, want %d (KIP-951)", got.CurrentLeader.LeaderID, leader)
	}
	// Nothing was written: the partition is still empty.
	offs, err := adm.ListEndOffsets(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("n", 0); o.Offset != 0 {
		t.Fatalf("end offset %d after a refused produce, want 0", o.Offset)
	}
}

func kafkaConfigFor(id int32) kafka.Config { return kafka.Config{NodeID: id} }

// oneRecordBatch is an uncompressed magic-2 batch of one record, with its
// CRC32C, not idempotent.
func oneRecordBatch() []byte {
	r := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, FirstTimestamp: 1, MaxTimestamp: 1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// consumeAll reads n records of topic from the start, from every
// partition, through the cluster's leaders, sorted by value; opts may set
// the isolation level.
func consumeAll(t *testing.T, c *testCluster, topic string, n int, opts ...kgo.Opt) []string {
	t.Helper()
	cl := c.client(append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before the deadline", len(got), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	return got
}

// testLogger logs node id's messages to the test log with KGW_DEBUG set.
func testLogger(t *testing.T, id int32) *zap.Logger {
	if os.Getenv("KGW_DEBUG") == "" {
		return nil
	}
	return zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).With(zap.Int32("node", id))
}

// TestClusterCoordinatorMoves: committed offsets survive the coordinator
// role moving to another node (the coordinator role): the new coordinator restores them
// from etcd, and a consumer group resumes from them.
func TestClusterCoordinatorMoves(t *testing.T) {
	c, _, adm, ctx := startWithTopic(t, 3, "g", 3)
	c.waitLeaders(adm, "g", 3)
	offs := kadm.Offsets{}
	for p := range int32(3) {
		offs.Add(kadm.Offset{Topic: "g", Partition: p, At: int64(10 + p), LeaderEpoch: -1})
	}
	if err := adm.CommitAllOffsets(ctx, "grp", offs); err != nil {
		t.Fatal(err)
	}
	coord := c.coordinator(adm, "grp")
	c.stop(coord)
	// A fresh client: this one may keep dialing the stopped node, which it
	// cached as the coordinator, until its retries run out.
	adm = kadm.NewClient(c.client())
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := adm.FetchOffsets(ctx, "grp")
		if err == nil && got.Error() == nil {
			for p := range int32(3) {
				o, ok := got.Lookup("g", p)
				if !ok || o.At != int64(10+p) {
					t.Fatalf("partition %d: committed offset %+v after the coordinator moved, want %d", p, o, 10+p)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("offsets not served after the coordinator moved: %v %v", err, got.Error())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if now := c.coordinator(adm, "grp"); now == coord {
		t.Fatalf("coordinator still %d after it stopped", coord)
	}
}

// coordinator is the node FindCoordinator names for group.
func (c *testCluster) coordinator(adm *kadm.Client, group string) int32 {
	c.t.Helper()
	return c.coordinatorWhere(adm, group, "any node", func(int32) bool { return true })
}

// coordinatorWhere waits until FindCoordinator for group names a node
// that want accepts (described by what), and returns it.
func (c *testCluster) coordinatorWhere(adm *kadm.Client, group, what string, want func(int32) bool) int32 {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, ok := adm.FindGroupCoordinators(ctx, group)[group]
		cancel()
		if ok && r.Err == nil && want(r.NodeID) {
			return r.NodeID
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no coordinator for %s at %s: %+v", group, what, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCoordinatorAt waits until FindCoordinator names node: the first
// node up takes the coordinator role, and hands it over to the node
// rendezvous placement prefers once that one has joined, so a test that
// targets the coordinator waits for the role to settle first.
func (c *testCluster) waitCoordinatorAt(adm *kadm.Client, node int32) {
	c.t.Helper()
	c.coordinatorWhere(adm, "settle-probe", fmt.Sprintf("node %d", node), func(id int32) bool { return id == node })
}

// TestClusterGracefulStopHandsOver: once a node's Close returns, it is
// deregistered and owns nothing (graceful handover), and the partitions it led are
// served by the others with every acknowledged record.
func TestClusterGracefulStopHandsOver(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 3, "h", 6)
	leaders := c.waitLeaders(adm, "h", 6)
	var want []string
	want = append(want, produceN(t, ctx, cl, "h", 60)...)
	victim := leaders[0]
	c.stop(victim)
	etcd := c.etcd.Client(t)
	resp, err := etcd.Get(ctx, node.DefaultPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	name := strconv.Itoa(int(victim))
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		if k == node.DefaultPrefix+"nodes/"+name {
			t.Errorf("node %d still registered after Close", victim)
		}
		if strings.HasPrefix(k, node.DefaultPrefix+"owner/") && strings.Contains(string(kv.Value), `"node":"`+name+`"`) {
			t.Errorf("%s still owned by node %d after Close: %s", k, victim, kv.Value)
		}
	}
	checkConsumed(t, c, "h", want)
}

// TestClusterMergesRanges: the many small ranges of a partition's group
// commits are merged in the background, so etcd keeps a few records per
// partition; a new owner rebuilds the same records from merged objects.
func TestClusterMergesRanges(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 1, "m", 1)
	c.waitLeaders(adm, "m", 1)
	var want []string
	want = append(want, produceN(t, ctx, cl, "m", 100)...) // one group commit each: 100 ranges
	etcd := c.etcd.Client(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := etcd.Get(ctx, node.DefaultPrefix+"log/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		ranges := 0
		for _, kv := range resp.Kvs {
			if strings.Contains(string(kv.Key), "/r/") {
				ranges++
			}
		}
		if ranges <= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d range records after 100 commits: not merged", ranges)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.start(2)
	c.stop(1) // node 2 rebuilds from the merged objects
	checkConsumed(t, c, "m", want)
}

// TestClusterIdempotentRetryAfterFailover: an idempotent producer's retry
// of an acknowledged batch, sent to the partition's new owner after a
// failover, is recognised as a duplicate (rebuild before serving: producer state is replayed
// from the published batches) and gets the original offset.
func TestClusterIdempotentRetryAfterFailover(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 2, "i", 1)
	ir := initProducer(t, ctx, cl)
	batches := [][]byte{
		idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 0),
		idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 1),
	}
	var offsets []int64
	for _, b := range batches {
		_, off := produceToLeader(t, ctx, c, adm, cl, "i", b)
		offsets = append(offsets, off)
	}
	// The node serving the partition now, after any handover since the
	// acknowledgements: stopping it makes the other one rebuild.
	leader := c.servingLeader(ctx, adm, cl, "i")
	c.stop(leader)
	next := c.waitMoved(adm, "i", 0, leader)
	// The retry of the last batch: the original offset, nothing written.
	if got := produceTo(t, ctx, cl, next, "i", batches[1]); got != offsets[1] {
		t.Fatalf("retried batch got offset %d, want the original %d", got, offsets[1])
	}
	end, err := adm.ListEndOffsets(ctx, "i")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("i", 0); o.Offset != offsets[1]+1 {
		t.Fatalf("end offset %d after the retry, want %d: the retry was written again", o.Offset, offsets[1]+1)
	}
}

// produceReq is a Produce of batch to topic/0, acks=all.
func produceReq(topic string, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produceTo sends batch to topic/0 on node id, acks=all, and returns the
// base offset it was given.
func produceTo(t *testing.T, ctx context.Context, cl *kgo.Client, id int32, topic string, batch []byte) int64 {
	t.Helper()
	resp, err := produceReq(topic, batch).RequestWith(ctx, cl.Broker(int(id)))
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("produce to node %d: error code %d", id, p.ErrorCode)
	}
	return p.BaseOffset
}

// idempotentBatch is a one-record batch of producer pid at epoch and
// sequence seq.
func idempotentBatch(pid int64, epoch int16, seq int32) []byte {
	r := kmsg.Record{Key: []byte("k"), Value: fmt.Appendf(nil, "seq %d", seq)}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, FirstTimestamp: 1, MaxTimestamp: 1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// waitMoved waits until partition p of topic is led by a node other than
// from that serves it (see servesOwn), and returns it.
func (c *testCluster) waitMoved(adm *kadm.Client, topic string, p, from int32) int32 {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if l, ok := c.waitLeaders(adm, topic, -1)[p]; ok && l != from && c.servesOwn(l, topic, p) {
			return l
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s/%d still led by node %d", topic, p, from)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// servesOwn reports whether node id names itself the leader of topic/p
// in its own Metadata. Only that is proof it serves the partition: a
// node names itself only once its copy is rebuilt (rebuild before serving), whereas any
// other node names an owner from its etcd record, while that owner is
// still rebuilding too, and so answers Metadata before the owner can
// take a produce.
func (c *testCluster) servesOwn(id int32, topic string, p int32) bool {
	c.mu.Lock()
	s := c.nodes[id]
	c.mu.Unlock()
	if s == nil {
		return false
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl) // a seed broker: node id itself
	if err != nil {
		return false
	}
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			if t.Topic != nil && *t.Topic == topic && rp.Partition == p {
				return rp.ErrorCode == 0 && rp.Leader == id
			}
		}
	}
	return false
}

// servingLeader waits until topic/0's leader serves it (servesOwn) and
// returns it.
func (c *testCluster) servingLeader(ctx context.Context, adm *kadm.Client, cl *kgo.Client, topic string) int32 {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader := c.waitLeaders(adm, topic, 1)[0]
		if c.servesOwn(leader, topic, 0) {
			return leader
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s/0: leader %d never serves it", topic, leader)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// produceN produces n records valued prefix000, prefix001, ... one at a
// time (each acknowledged before the next) and returns the values.
func produceN(t *testing.T, ctx context.Context, cl *kgo.Client, prefix string, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		v := fmt.Sprintf("%s%03d", prefix, i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(v), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
		out = append(out, v)
	}
	return out
}

// checkConsumed requires topic to hold exactly the values want, in any
// order.
func checkConsumed(t *testing.T, c *testCluster, topic string, want []string) {
	t.Helper()
	got := consumeAll(t, c, topic, len(want))
	if strings.Join(got, ",") != strings.Join(sortedCopy(want), ",") {
		t.Fatalf("%s holds %v, want %v", topic, got, sortedCopy(want))
	}
}

// TestClusterReadsBelowTheCache: a new owner copies only the newest
// published ranges that fit cluster.cache.rebuild.bytes into its local
// cache (the bounded rebuild) and serves every older offset from the object store (pinned reads below the cache,
// ledger R20, R21); its producer state is replayed from the published
// start all the same, so a retry from a producer whose batches are all
// below the cache is still deduplicated (the local copy as a cache).
func TestClusterReadsBelowTheCache(t *testing.T) {
	const cache = 4096
	c, cl, adm, ctx := startWithTopic(t, 2, "o", 1, func(cfg *Config) {
		cfg.Cluster.CacheRebuildBytes = cache
		// No exported state (periodic state export): the replay reads the published log.
		cfg.Cluster.StateInterval = time.Hour
	})
	ir := initProducer(t, ctx, cl)
	var leader int32
	old := [][]byte{idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 0), idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 1)}
	var offsets []int64
	for _, b := range old {
		var off int64
		leader, off = produceToLeader(t, ctx, c, adm, cl, "o", b)
		offsets = append(offsets, off)
	}
	want := append([]string{"seq 0", "seq 1"}, produceN(t, ctx, cl, "o", 300)...)
	leader = c.waitLeaders(adm, "o", 1)[0]
	c.stop(leader)
	next := c.waitMoved(adm, "o", 0, leader)
	c.mu.Lock()
	res := c.nodes[next].res
	c.mu.Unlock()
	start, end, err := res.Replicas().LocalBounds("o", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %d caches [%d, %d)", next, start, end)
	// At most cache bytes of batches of 61 bytes or more are local; the
	// old producer's are not.
	if start <= resolver.Offset(offsets[1]) || end != resolver.Offset(len(want)) || end-start > cache/61 {
		t.Fatalf("local cache [%d, %d) of a log [0, %d): not a tail of at most %d bytes", start, end, len(want), cache)
	}
	if got := produceTo(t, ctx, cl, next, "o", old[1]); got != offsets[1] {
		t.Fatalf("retried old batch got offset %d, want the original %d", got, offsets[1])
	}
	first, err := adm.ListStartOffsets(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := first.Lookup("o", 0); o.Offset != 0 {
		t.Fatalf("log start %d after the failover, want the published 0", o.Offset)
	}
	// The old producer's batches carry timestamp 1: found below the cache
	// (ledger R22), not at the cache's first batch.
	byTime, err := adm.ListOffsetsAfterMilli(ctx, 0, "o")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := byTime.Lookup("o", 0); o.Err != nil || o.Offset != 0 {
		t.Fatalf("offset for time 0: %+v, want 0", o)
	}
	checkConsumed(t, c, "o", want) // the retry wrote nothing
	// The reads below the cache were covered by the node's reader floor
	// (cluster/diskless floored reads), one record under its session, not a pin each.
	floors, err := c.etcd.Client(t).Get(ctx, fmt.Sprintf("%sfloor/%d/", node.DefaultPrefix, next), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || floors.Count != 1 {
		t.Fatalf("node %d read below its cache with %v floor records (%v), want 1", next, floors, err)
	}
	// DeleteRecords below the local cache moves the published start (DeleteRecords below the local copy):
	// here, and for the next owner.
	// The new owner's upkeep merges the old owner's ranges meanwhile: a
	// conflict with it is retried inside, never a storage error.
	cut := int64(start) / 2
	if r := deleteRecords(t, ctx, adm, "o", cut); r.LowWatermark != cut {
		t.Fatalf("delete records below %d: %+v, want low watermark %d", cut, r, cut)
	}
	c.start(leader)
	c.stop(next)
	adm = kadm.NewClient(c.client()) // the restarted node listens on a new port
	c.waitMoved(adm, "o", 0, next)
	first, err = adm.ListStartOffsets(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := first.Lookup("o", 0); o.Offset != cut {
		t.Fatalf("log start %d on the next owner, want %d", o.Offset, cut)
	}
	checkConsumed(t, c, "o", want[cut:])
}

// deleteRecords deletes topic/0's records below at, again while the
// answer is a retriable code other than KAFKA_STORAGE_ERROR (a timeout,
// a moved leader: what a client retries); a storage error, or any other,
// fails the test.
func deleteRecords(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, at int64) kadm.DeleteRecordsResponse {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		del, err := adm.DeleteRecords(ctx, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: at, LeaderEpoch: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := del.Lookup(topic, 0)
		switch {
		case r.Err == nil:
			return r
		case errors.Is(r.Err, kerr.KafkaStorageError) || !kerr.IsRetriable(r.Err) || time.Now().After(deadline):
			t.Fatalf("delete records of %s below %d: %v", topic, at, r.Err)
		}
		t.Logf("delete records of %s below %d: %v: again", topic, at, r.Err)
	}
}

// produceToLeader sends batch to topic/0's serving leader (servingLeader)
// as produceTo does, again to the new leader when a handover moved the
// partition meanwhile (the nodes may see each other only after the topic
// was placed); it returns the leader that took it and the offset.
func produceToLeader(t *testing.T, ctx context.Context, c *testCluster, adm *kadm.Client, cl *kgo.Client, topic string, batch []byte) (int32, int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader := c.servingLeader(ctx, adm, cl, topic)
		resp, err := produceReq(topic, batch).RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		switch {
		case p.ErrorCode == 0:
			return leader, p.BaseOffset
		case p.ErrorCode != kerr.NotLeaderForPartition.Code || time.Now().After(deadline):
			t.Fatalf("produce to node %d: error code %d", leader, p.ErrorCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterFailoverFromExportedState: an owner exports its producer
// state to the object store (periodic state export, the published producer state); a new owner
// installs it and replays only from the offset it covers (exported producer state),
// not from the published start, and still deduplicates a retry from a
// producer whose batches are all older than that.
func TestClusterFailoverFromExportedState(t *testing.T) {
	c, cl, adm, ctx := startWithTopic(t, 2, "s", 1, func(cfg *Config) {
		cfg.Cluster.CacheRebuildBytes = 1 // no range fits: nothing is copied
		cfg.Cluster.StateInterval = 50 * time.Millisecond
	})
	ir := initProducer(t, ctx, cl)
	old := [][]byte{idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 0), idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 1)}
	var offsets []int64
	for _, b := range old {
		_, off := produceToLeader(t, ctx, c, adm, cl, "s", b)
		offsets = append(offsets, off)
	}
	want := append([]string{"seq 0", "seq 1"}, produceN(t, ctx, cl, "s", 200)...)
	covered := waitState(t, c, int64(len(want)))
	leader := c.waitLeaders(adm, "s", 1)[0]
	c.stop(leader)
	next := c.waitMoved(adm, "s", 0, leader)
	c.mu.Lock()
	res := c.nodes[next].res
	c.mu.Unlock()
	from, err := res.Replicas().ReplayedFrom("s", 0)
	if err != nil || int64(from) != covered {
		t.Fatalf("the new owner replayed from %d (%v), want the exported state's %d", from, err, covered)
	}
	if got := produceTo(t, ctx, cl, next, "s", old[1]); got != offsets[1] {
		t.Fatalf("retried old batch got offset %d, want the original %d", got, offsets[1])
	}
	checkConsumed(t, c, "s", want) // the retry wrote nothing
}

// waitState waits until the one partition's exported state covers end
// and returns the offset it covers.
func waitState(t *testing.T, c *testCluster, end int64) int64 {
	t.Helper()
	etcd := c.etcd.Client(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := etcd.Get(testCtx(t), node.DefaultPrefix+"log/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			var rec struct{ Covered int64 }
			if strings.HasSuffix(string(kv.Key), "/state") && json.Unmarshal(kv.Value, &rec) == nil && rec.Covered >= end {
				return rec.Covered
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no exported state covering %d", end)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
