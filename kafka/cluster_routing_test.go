package kafka

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/topicconfig"
)

// testCluster is a Cluster configured by the test: the live nodes, each
// partition's owner and epoch, and the coordinator, changeable at any
// time (what a node's etcd watch would hand the front end). Both servers
// of a rig share it, as every node sees the same cluster.
type testCluster struct {
	mu          sync.Mutex
	brokers     []Broker
	leaders     map[resolver.PartitionKey][2]int32 // node, epoch; absent: no owner
	coordinator int32                              // -1: none
	catalog     *sharedCatalog
	verify      func(topic string, partition int32, pid int64, epoch int16) (bool, error)
}

func (c *testCluster) Brokers() []Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.brokers)
}

func (c *testCluster) Leader(topic string, partition int32) (int32, int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.leaders[resolver.PartitionKey{Topic: topic, Partition: partition}]
	return l[0], l[1], ok
}

func (c *testCluster) Coordinator() (int32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.coordinator, c.coordinator >= 0
}

func (c *testCluster) Catalog() Catalog { return c.catalog }

// VerifyTxn answers what the test set (verify), else no registration:
// the rig has no transaction relay.
func (c *testCluster) VerifyTxn(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error) {
	c.mu.Lock()
	verify := c.verify
	c.mu.Unlock()
	if verify == nil {
		return false, nil
	}
	return verify(topic, partition, pid, epoch)
}

// AddTxnPartition: the rig has no transaction coordinator across nodes.
func (c *testCluster) AddTxnPartition(context.Context, string, string, int32, int64, int16) (int16, error) {
	return 0, errors.New("no transaction relay in the rig")
}

// lead makes node the partition's owner at epoch; node -1 removes the
// owner.
func (c *testCluster) lead(topic string, partition, node, epoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := resolver.PartitionKey{Topic: topic, Partition: partition}
	if node < 0 {
		delete(c.leaders, k)
		return
	}
	c.leaders[k] = [2]int32{node, epoch}
}

func (c *testCluster) setCoordinator(node int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.coordinator = node
}

// sharedCatalog applies every topic change to every node's resolver, as
// the shared catalog does once each node's watch has applied it, and
// counts the changes by method.
type sharedCatalog struct {
	mu    sync.Mutex
	res   []*resolver.Resolver
	calls map[string]int
}

func (c *sharedCatalog) count(m string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[m]++
}

func (c *sharedCatalog) called(m string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[m]
}

func (c *sharedCatalog) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error) {
	c.count("CreateTopic")
	t, err := c.res[0].CreateTopic(name, partitions, replication, configs, validateOnly)
	if err == nil && !validateOnly {
		for _, r := range c.res[1:] {
			if _, err := r.CreateTopic(name, t.Partitions, replication, configs, false); err != nil {
				return t, err
			}
		}
	}
	return t, err
}

func (c *sharedCatalog) EnsureTopic(name string) (resolver.Topic, error) {
	c.count("EnsureTopic")
	t, err := c.res[0].EnsureTopic(name)
	for _, r := range c.res[1:] {
		if err == nil {
			_, err = r.EnsureTopic(name)
		}
	}
	return t, err
}

func (c *sharedCatalog) each(m string, validateOnly bool, f func(*resolver.Resolver, bool) error) error {
	c.count(m)
	if err := f(c.res[0], validateOnly); err != nil || validateOnly {
		return err
	}
	for _, r := range c.res[1:] {
		if err := f(r, false); err != nil {
			return err
		}
	}
	return nil
}

func (c *sharedCatalog) DeleteTopic(name string) error {
	return c.each("DeleteTopic", false, func(r *resolver.Resolver, _ bool) error { return r.DeleteTopic(name) })
}

func (c *sharedCatalog) CreatePartitions(name string, count int32, validateOnly bool) error {
	return c.each("CreatePartitions", validateOnly, func(r *resolver.Resolver, v bool) error { return r.CreatePartitions(name, count, v) })
}

func (c *sharedCatalog) AlterTopicConfigs(name string, configs map[string]string, validateOnly bool) error {
	return c.each("AlterTopicConfigs", validateOnly, func(r *resolver.Resolver, v bool) error { return r.AlterTopicConfigs(name, configs, v) })
}

func (c *sharedCatalog) IncrementalAlterTopicConfigs(name string, ops []topicconfig.Op, validateOnly bool) error {
	return c.each("IncrementalAlterTopicConfigs", validateOnly, func(r *resolver.Resolver, v bool) error {
		return r.IncrementalAlterTopicConfigs(name, ops, v)
	})
}

// Node ids of a rig: a (the server the tests talk to) is node 2, b node
// 1, so the lowest live id, the controller (leaders at their epochs), is not a's.
const (
	nodeA int32 = 2
	nodeB int32 = 1
)

// clusterRig is two real servers, each on its own resolver and offsets
// store, sharing one testCluster.
type clusterRig struct {
	t          *testing.T
	cl         *testCluster
	a, b       *Server
	resA, resB *resolver.Resolver
}

func newClusterRig(t *testing.T, topics map[string]int32) *clusterRig {
	t.Helper()
	g := &clusterRig{t: t, resA: openResolver(t), resB: openResolver(t)}
	g.cl = &testCluster{leaders: map[resolver.PartitionKey][2]int32{}, coordinator: nodeB,
		catalog: &sharedCatalog{res: []*resolver.Resolver{g.resA, g.resB}, calls: map[string]int{}}}
	for name, n := range topics {
		if _, err := g.cl.catalog.CreateTopic(name, n, 1, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	g.cl.catalog.calls = map[string]int{}
	g.a = startClusterNode(t, g.resA, nodeA, g.cl)
	g.b = startClusterNode(t, g.resB, nodeB, g.cl)
	g.cl.brokers = []Broker{brokerAt(t, nodeB, g.b), brokerAt(t, nodeA, g.a)} // node id order
	return g
}

func startClusterNode(t *testing.T, res *resolver.Resolver, id int32, cl Cluster) *Server {
	t.Helper()
	offs, err := offsets.Open(filepath.Join(t.TempDir(), "offsets"), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { offs.Close() }) // after the server's close (LIFO)
	return startServer(t, Config{Resolver: res, Offsets: offs, NodeID: id, Cluster: cl, LogDir: t.TempDir(), Telemetry: testTelemetry(t)})
}

func brokerAt(t *testing.T, id int32, s *Server) Broker {
	t.Helper()
	host, port, err := net.SplitHostPort(s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return Broker{NodeID: id, Host: host, Port: int32(p)}
}

// ask sends req on c and returns its response.
func ask(c *rawConn, req kmsg.Request) kmsg.Response {
	c.t.Helper()
	c.send(7, req)
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if corr := c.recv(resp); corr != 7 {
		c.t.Fatalf("correlation id %d", corr)
	}
	return resp
}

// clusterClient is a franz-go client seeded with a only. Versions stop
// before topic ids (Kafka 2.7): each test node has its own resolver, so
// the same topic has a different id on each.
func (g *clusterRig) clusterClient(opts ...kgo.Opt) *kgo.Client {
	g.t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(g.a.Addr().String()), kgo.MaxVersions(kversion.V2_7_0())}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(cl.Close)
	return cl
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// Leaders at their epochs, routing per request: Metadata and DescribeCluster show the cluster's nodes, each
// partition's owner at its epoch, LEADER_NOT_AVAILABLE without one, the
// lowest node id as controller; an owner change shows on the next request.
func TestClusterMetadataLeaders(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 3})
	g.cl.lead("t", 0, nodeA, 5)
	g.cl.lead("t", 1, nodeB, 7)
	ctx := testCtx(t)

	check := func(want map[int32][2]int32) {
		t.Helper()
		// A new client each time: a client caches metadata.
		md, err := kadm.NewClient(g.clusterClient()).Metadata(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if md.Controller != nodeB {
			t.Errorf("controller %d, want the lowest node id %d", md.Controller, nodeB)
		}
		if ids := md.Brokers.NodeIDs(); !slices.Equal(ids, []int32{nodeB, nodeA}) {
			t.Errorf("brokers %v", ids)
		}
		for _, b := range md.Brokers {
			want := brokerAt(t, b.NodeID, map[int32]*Server{nodeA: g.a, nodeB: g.b}[b.NodeID])
			if b.Host != want.Host || b.Port != want.Port {
				t.Errorf("broker %d at %s:%d, want %s:%d", b.NodeID, b.Host, b.Port, want.Host, want.Port)
			}
		}
		for p := range int32(3) {
			pd := md.Topics["t"].Partitions[p]
			l, led := want[p]
			switch {
			case !led:
				if !errors.Is(pd.Err, kerr.LeaderNotAvailable) || pd.Leader != -1 || len(pd.Replicas) != 0 {
					t.Errorf("t/%d without owner: err %v leader %d replicas %v", p, pd.Err, pd.Leader, pd.Replicas)
				}
			case pd.Err != nil || pd.Leader != l[0] || pd.LeaderEpoch != l[1] ||
				!slices.Equal(pd.Replicas, []int32{l[0]}) || !slices.Equal(pd.ISR, []int32{l[0]}):
				t.Errorf("t/%d: err %v leader %d epoch %d replicas %v isr %v, want leader %d epoch %d",
					p, pd.Err, pd.Leader, pd.LeaderEpoch, pd.Replicas, pd.ISR, l[0], l[1])
			}
		}
	}
	check(map[int32][2]int32{0: {nodeA, 5}, 1: {nodeB, 7}})
	g.cl.lead("t", 0, nodeB, 6) // a handover
	g.cl.lead("t", 2, nodeA, 1) // an acquisition
	g.cl.lead("t", 1, -1, 0)    // a failover under way
	check(map[int32][2]int32{0: {nodeB, 6}, 2: {nodeA, 1}})

	dc := kmsg.NewPtrDescribeClusterRequest()
	resp := ask(dialRaw(t, g.a.Addr()), dc).(*kmsg.DescribeClusterResponse)
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
	}
	if resp.ErrorCode != 0 || resp.ControllerID != nodeB || !slices.Equal(ids, []int32{nodeB, nodeA}) {
		t.Errorf("DescribeCluster: error %d controller %d brokers %v", resp.ErrorCode, resp.ControllerID, ids)
	}
}

// produceReq is one Produce of one batch to each of partitions of topic.
func produceReq(version int16, topic string, partitions ...int32) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, txnRecords(1, -1, 0, 0, "v")
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	return req
}

// NOT_LEADER_OR_FOLLOWER routing: a produce to a partition led elsewhere, or by none, is
// NOT_LEADER_OR_FOLLOWER; from v10 the answer names the current leader
// and its endpoint. Real producers reach every leader.
func TestClusterProduceNotLeader(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 3})
	g.cl.lead("t", 0, nodeA, 5)
	g.cl.lead("t", 1, nodeB, 7)
	c := dialRaw(t, g.a.Addr())
	wantB := brokerAt(t, nodeB, g.b)

	resp := ask(c, produceReq(10, "t", 0, 1, 2)).(*kmsg.ProduceResponse)
	ps := resp.Topics[0].Partitions
	if ps[0].ErrorCode != 0 {
		t.Errorf("t/0 led here: error %d", ps[0].ErrorCode)
	}
	if ps[1].ErrorCode != kerr.NotLeaderForPartition.Code || ps[1].CurrentLeader.LeaderID != nodeB || ps[1].CurrentLeader.LeaderEpoch != 7 {
		t.Errorf("t/1 led by b: error %d current leader %+v", ps[1].ErrorCode, ps[1].CurrentLeader)
	}
	if ps[2].ErrorCode != kerr.NotLeaderForPartition.Code || ps[2].CurrentLeader.LeaderID != -1 {
		t.Errorf("t/2 without owner: error %d current leader %+v", ps[2].ErrorCode, ps[2].CurrentLeader)
	}
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != nodeB || resp.Brokers[0].Host != wantB.Host || resp.Brokers[0].Port != wantB.Port {
		t.Errorf("node endpoints %+v, want only node %d at %s:%d", resp.Brokers, nodeB, wantB.Host, wantB.Port)
	}

	// v9 has no KIP-951 fields.
	resp = ask(c, produceReq(9, "t", 1)).(*kmsg.ProduceResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
		t.Errorf("v9: error %d current leader %+v brokers %v", p.ErrorCode, p.CurrentLeader, resp.Brokers)
	}
	if _, hwm, _, err := g.b.bounds("t", 1); err != nil || hwm != 0 {
		t.Errorf("b's t/1 after refused produces: hwm %d, %v", hwm, err)
	}

	// A real producer seeded with a only writes each record on its leader.
	prod := g.clusterClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testCtx(t)
	for _, p := range []int32{0, 1} {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("produce t/%d: %v", p, err)
		}
	}
	if _, hwm, _, _ := g.a.bounds("t", 0); hwm != 2 {
		t.Errorf("a's t/0 hwm %d, want 2", hwm)
	}
	if _, hwm, _, _ := g.b.bounds("t", 1); hwm != 1 {
		t.Errorf("b's t/1 hwm %d, want 1", hwm)
	}
}

func fetchOne(c *rawConn, version int16, topic string, partition, current int32) kmsg.FetchResponseTopicPartition {
	c.t.Helper()
	req := fetchReq(0, -1, []fetchPart{{topic: topic, partition: partition}}, nil)
	req.SetVersion(version)
	req.Topics[0].Partitions[0].CurrentLeaderEpoch = current
	resp := ask(c, req).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		c.t.Fatalf("fetch answered %v", answered(resp))
	}
	return resp.Topics[0].Partitions[0]
}

// NOT_LEADER_OR_FOLLOWER routing, the leader epoch check: Fetch, ListOffsets and OffsetForLeaderEpoch check the current
// leader epoch against the partition's, then its leader; Fetch v12 names
// the current leader. DeleteRecords and DescribeProducers are the
// leader's too.
func TestClusterFetchEpochs(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 2})
	g.cl.lead("t", 0, nodeA, 5)
	g.cl.lead("t", 1, nodeB, 7)
	c := dialRaw(t, g.a.Addr())
	if p := ask(c, produceReq(9, "t", 0)).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("produce: %d", p.ErrorCode)
	}

	for _, tc := range []struct {
		current int32
		code    int16
	}{{4, kerr.FencedLeaderEpoch.Code}, {5, 0}, {6, kerr.UnknownLeaderEpoch.Code}, {-1, 0}} {
		p := fetchOne(c, 12, "t", 0, tc.current)
		if p.ErrorCode != tc.code {
			t.Errorf("fetch t/0 at epoch %d: error %d, want %d", tc.current, p.ErrorCode, tc.code)
		}
		if tc.code == 0 && len(p.RecordBatches) == 0 {
			t.Errorf("fetch t/0 at epoch %d: no records", tc.current)
		}
		if tc.code == kerr.FencedLeaderEpoch.Code && (p.CurrentLeader.LeaderID != nodeA || p.CurrentLeader.LeaderEpoch != 5) {
			t.Errorf("fenced fetch: current leader %+v", p.CurrentLeader)
		}
	}
	if p := fetchOne(c, 12, "t", 1, 7); p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != nodeB || p.CurrentLeader.LeaderEpoch != 7 {
		t.Errorf("fetch t/1 v12: error %d current leader %+v", p.ErrorCode, p.CurrentLeader)
	}
	if p := fetchOne(c, 11, "t", 1, 7); p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != -1 {
		t.Errorf("fetch t/1 v11: error %d current leader %+v", p.ErrorCode, p.CurrentLeader)
	}
	// From v16 (KIP-951) the response lists the endpoint of each leader
	// it names, once; before, the client asks Metadata.
	wantB := brokerAt(t, nodeB, g.b)
	topicA, _ := g.resA.Topic("t")
	for _, v := range []int16{15, 16, 18} {
		req := fetchReq(0, -1, []fetchPart{{topic: "t", partition: 1}, {topic: "t", partition: 0}}, nil)
		req.SetVersion(v)
		req.Topics[0].TopicID = topicA.ID
		resp := ask(c, req).(*kmsg.FetchResponse)
		switch {
		case v < 16 && len(resp.Brokers) != 0:
			t.Errorf("fetch v%d: node endpoints %+v", v, resp.Brokers)
		case v >= 16 && (len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != nodeB || resp.Brokers[0].Host != wantB.Host || resp.Brokers[0].Port != wantB.Port):
			t.Errorf("fetch v%d: node endpoints %+v, want node %d only", v, resp.Brokers, nodeB)
		}
	}
	// Before v9 there is no current epoch: a stale one is not checked.
	if p := fetchOne(c, 8, "t", 0, 4); p.ErrorCode != 0 {
		t.Errorf("fetch v8: error %d", p.ErrorCode)
	}

	listOffset := func(partition, current int32) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.SetVersion(4)
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = partition, current, -1
		rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
		req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
		return ask(c, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	if p := listOffset(0, 4); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("ListOffsets epoch 4: error %d", p.ErrorCode)
	}
	if p := listOffset(0, 6); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("ListOffsets epoch 6: error %d", p.ErrorCode)
	}
	if p := listOffset(0, 5); p.ErrorCode != 0 || p.Offset != 1 || p.LeaderEpoch != 5 {
		t.Errorf("ListOffsets epoch 5: error %d offset %d epoch %d", p.ErrorCode, p.Offset, p.LeaderEpoch)
	}
	if p := listOffset(1, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("ListOffsets t/1: error %d", p.ErrorCode)
	}

	epochEnd := func(partition, current int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.SetVersion(3)
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = partition, current, 0
		rt.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{rp}
		req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{rt}
		return ask(c, req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	}
	if p := epochEnd(0, 4); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Errorf("OffsetForLeaderEpoch current 4: error %d", p.ErrorCode)
	}
	if p := epochEnd(0, 5); p.ErrorCode != 0 || p.LeaderEpoch != 5 || p.EndOffset != 1 {
		t.Errorf("OffsetForLeaderEpoch current 5: error %d epoch %d end %d", p.ErrorCode, p.LeaderEpoch, p.EndOffset)
	}
	if p := epochEnd(1, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("OffsetForLeaderEpoch t/1: error %d", p.ErrorCode)
	}

	dr := kmsg.NewPtrDeleteRecordsRequest()
	drt := kmsg.NewDeleteRecordsRequestTopic()
	drt.Topic = "t"
	drp := kmsg.NewDeleteRecordsRequestTopicPartition()
	drp.Partition, drp.Offset = 1, 0
	drt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{drp}
	dr.Topics = []kmsg.DeleteRecordsRequestTopic{drt}
	if p := ask(c, dr).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("DeleteRecords t/1: error %d", p.ErrorCode)
	}
	dp := kmsg.NewPtrDescribeProducersRequest()
	dpt := kmsg.NewDescribeProducersRequestTopic()
	dpt.Topic, dpt.Partitions = "t", []int32{0, 1}
	dp.Topics = []kmsg.DescribeProducersRequestTopic{dpt}
	dps := ask(c, dp).(*kmsg.DescribeProducersResponse).Topics[0].Partitions
	if dps[0].ErrorCode != 0 || dps[1].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("DescribeProducers: errors %d, %d", dps[0].ErrorCode, dps[1].ErrorCode)
	}
}

// groupErrors lists the error codes a group API's response carries.
func groupErrors(resp kmsg.Response) []int16 {
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		return []int16{r.ErrorCode}
	case *kmsg.SyncGroupResponse:
		return []int16{r.ErrorCode}
	case *kmsg.HeartbeatResponse:
		return []int16{r.ErrorCode}
	case *kmsg.LeaveGroupResponse:
		return []int16{r.ErrorCode}
	case *kmsg.OffsetDeleteResponse:
		return []int16{r.ErrorCode}
	case *kmsg.ConsumerGroupHeartbeatResponse:
		return []int16{r.ErrorCode}
	case *kmsg.StreamsGroupHeartbeatResponse:
		return []int16{r.ErrorCode}
	case *kmsg.StreamsGroupDescribeResponse:
		var codes []int16
		for _, g := range r.Groups {
			codes = append(codes, g.ErrorCode)
		}
		return codes
	case *kmsg.OffsetCommitResponse:
		var codes []int16
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
		return codes
	case *kmsg.OffsetFetchResponse:
		if r.Version >= 8 {
			var codes []int16
			for _, g := range r.Groups {
				codes = append(codes, g.ErrorCode)
			}
			return codes
		}
		return []int16{r.ErrorCode}
	case *kmsg.DescribeGroupsResponse:
		var codes []int16
		for _, g := range r.Groups {
			codes = append(codes, g.ErrorCode)
		}
		return codes
	case *kmsg.DeleteGroupsResponse:
		var codes []int16
		for _, g := range r.Groups {
			codes = append(codes, g.ErrorCode)
		}
		return codes
	case *kmsg.ConsumerGroupDescribeResponse:
		var codes []int16
		for _, g := range r.Groups {
			codes = append(codes, g.ErrorCode)
		}
		return codes
	case *kmsg.InitProducerIDResponse:
		return []int16{r.ErrorCode}
	case *kmsg.AddPartitionsToTxnResponse:
		var codes []int16
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
		return codes
	case *kmsg.AddOffsetsToTxnResponse:
		return []int16{r.ErrorCode}
	case *kmsg.EndTxnResponse:
		return []int16{r.ErrorCode}
	case *kmsg.TxnOffsetCommitResponse:
		var codes []int16
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
		return codes
	case *kmsg.DescribeTransactionsResponse:
		var codes []int16
		for _, st := range r.TransactionStates {
			codes = append(codes, st.ErrorCode)
		}
		return codes
	}
	panic("groupErrors: not a group response")
}

// groupRequests is one request of every group API but ListGroups.
func groupRequests() []kmsg.Request {
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "g", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID = "g", "m"
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID = "g", "m"
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.SetVersion(3)
	leave.Group, leave.Members = "g", []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.SetVersion(7)
	commit.Group, commit.Generation, commit.MemberID = "g", -1, ""
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	fetch7 := kmsg.NewPtrOffsetFetchRequest()
	fetch7.SetVersion(7)
	fetch7.Group = "g"
	fetch8 := kmsg.NewPtrOffsetFetchRequest()
	fetch8.SetVersion(8)
	fetch8.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}}
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{"g", "h"}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g"}
	odel := kmsg.NewPtrOffsetDeleteRequest()
	odel.Group = "g"
	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Group, cgh.MemberID, cgh.RebalanceTimeoutMillis = "g", "m1234567890123456789", 10000
	cgh.SubscribedTopicNames = []string{"t"}
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{"g"}
	sgh := streamsJoinRequest("g", "t")
	sgd := kmsg.NewPtrStreamsGroupDescribeRequest()
	sgd.Groups = []string{"g"}
	return []kmsg.Request{join, sync, hb, leave, commit, fetch7, fetch8, describe, del, odel, cgh, cgd, sgh, sgd}
}

// streamsJoinRequest is a streams group member's first heartbeat
// (KIP-1071): one subtopology reading topic, no internal topics.
func streamsJoinRequest(group, topic string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, "s1234567890123456789", 0, 10000
	req.ProcessID = kmsg.StringPtr("process-1")
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topo.Epoch = 1
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{topic}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return req
}

// txnRequests is one request of every transaction API but
// ListTransactions, and a transactional InitProducerId.
func txnRequests() []kmsg.Request {
	id := "tx"
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = &id, 10000
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.TransactionalID, add.ProducerID = id, 1
	add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	addOff := kmsg.NewPtrAddOffsetsToTxnRequest()
	addOff.TransactionalID, addOff.ProducerID, addOff.Group = id, 1, "g"
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.Commit = id, 1, true
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID = id, "g", 1
	commit.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	desc := kmsg.NewPtrDescribeTransactionsRequest()
	desc.TransactionalIDs = []string{id, "other"}
	return []kmsg.Request{ip, add, addOff, end, commit, desc}
}

// Coordinator routing: FindCoordinator names the cluster's coordinator; every group API on
// another node is NOT_COORDINATOR (ListGroups: an empty list); a real
// consumer group seeded with a non-coordinator commits on the coordinator.
func TestClusterCoordinator(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 2})
	g.cl.lead("t", 0, nodeA, 1)
	g.cl.lead("t", 1, nodeB, 1)
	c := dialRaw(t, g.a.Addr())
	wantB := brokerAt(t, nodeB, g.b)

	find := func(version int16, typ int8) (code int16, node int32, host string, port int32) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(version)
		req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = typ, "g", []string{"g"}
		resp := ask(c, req).(*kmsg.FindCoordinatorResponse)
		if version >= 4 {
			co := resp.Coordinators[0]
			return co.ErrorCode, co.NodeID, co.Host, co.Port
		}
		return resp.ErrorCode, resp.NodeID, resp.Host, resp.Port
	}
	for _, v := range []int16{3, 4} {
		if code, node, host, port := find(v, coordinatorGroup); code != 0 || node != nodeB || host != wantB.Host || port != wantB.Port {
			t.Errorf("FindCoordinator v%d: error %d node %d at %s:%d", v, code, node, host, port)
		}
		if code, node, host, port := find(v, coordinatorTxn); code != 0 || node != nodeB || host != wantB.Host || port != wantB.Port {
			t.Errorf("FindCoordinator v%d transactional id: error %d node %d at %s:%d", v, code, node, host, port)
		}
	}

	for _, req := range append(groupRequests(), txnRequests()...) { // Coordinator routing, cluster transactions
		codes := groupErrors(ask(c, req))
		if len(codes) == 0 {
			t.Errorf("%s v%d on a non-coordinator: no error at all", apiName(req.Key()), req.GetVersion())
		}
		for _, code := range codes {
			if code != kerr.NotCoordinator.Code {
				t.Errorf("%s v%d on a non-coordinator: error %d", apiName(req.Key()), req.GetVersion(), code)
			}
		}
	}
	lg := ask(c, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
	if lg.ErrorCode != 0 || len(lg.Groups) != 0 {
		t.Errorf("ListGroups on a non-coordinator: error %d groups %v", lg.ErrorCode, lg.Groups)
	}
	lt := ask(c, kmsg.NewPtrListTransactionsRequest()).(*kmsg.ListTransactionsResponse)
	if lt.ErrorCode != 0 || len(lt.TransactionStates) != 0 {
		t.Errorf("ListTransactions on a non-coordinator: error %d states %v", lt.ErrorCode, lt.TransactionStates)
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	if r := ask(c, ip).(*kmsg.InitProducerIDResponse); r.ErrorCode != 0 || r.ProducerID < 0 {
		t.Errorf("idempotent InitProducerId on a non-coordinator: error %d id %d", r.ErrorCode, r.ProducerID)
	}

	// A real consumer group, seeded with a, is coordinated by b.
	prod := g.clusterClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testCtx(t)
	for _, p := range []int32{0, 1} {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := g.clusterClient(kgo.ConsumerGroup("cg"), kgo.ConsumeTopics("t"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < 2; {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 2: %v", got, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	committed, err := kadm.NewClient(g.clusterClient()).FetchOffsets(ctx, "cg")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int32{0, 1} {
		if o, ok := committed.Lookup("t", p); !ok || o.At != 1 {
			t.Errorf("committed t/%d: %+v (%v)", p, o, ok)
		}
	}
	lgB := ask(dialRaw(t, g.b.Addr()), kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
	if len(lgB.Groups) != 1 || lgB.Groups[0].Group != "cg" {
		t.Errorf("the coordinator lists %v", lgB.Groups)
	}
	cons.Close() // leaves the group on b, before the coordinator moves

	// The coordinator moves to a: a serves group APIs; none: unavailable.
	g.cl.setCoordinator(nodeA)
	if code := groupErrors(ask(c, groupRequests()[2]))[0]; code == kerr.NotCoordinator.Code {
		t.Errorf("Heartbeat on the new coordinator: NOT_COORDINATOR")
	}
	g.cl.setCoordinator(-1)
	if code, node, _, _ := find(4, coordinatorGroup); code != kerr.CoordinatorNotAvailable.Code || node != -1 {
		t.Errorf("FindCoordinator without a coordinator: error %d node %d", code, node)
	}
}

// notInClusterKeys are the API keys hidden in cluster mode: share groups
// without States.
var notInClusterKeys = []int16{76, 77, 78, 79, 90, 91, 92}

// advertisedKeys asks c for ApiVersions v3 and returns its keys with
// their maximum versions and the feature names.
func advertisedKeys(c *rawConn) (keys map[int16]int16, features []string) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	resp := ask(c, req).(*kmsg.ApiVersionsResponse)
	keys = map[int16]int16{}
	for _, k := range resp.ApiKeys {
		keys[k.ApiKey] = k.MaxVersion
	}
	for _, f := range resp.SupportedFeatures {
		features = append(features, f.Name)
	}
	for _, f := range resp.FinalizedFeatures {
		features = append(features, f.Name)
	}
	return keys, features
}

// sortedFeatures is names sorted (a copy).
func sortedFeatures(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// lookupAPIMax is key's highest version on a single node.
func lookupAPIMax(key int16) int16 {
	a, _ := lookupAPI(key)
	return a.max
}

// No share groups without States: share groups are neither advertised nor served in cluster mode; a
// single node still advertises them. Cluster transactions: every other
// API at every version, transaction.version supported and finalized at
// 2 as on a single node (implicit adds across nodes), consumer groups
// (group.version) and streams groups (their APIs and streams.version,
// supported and finalized).
func TestClusterNotServed(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 1})
	g.cl.lead("t", 0, nodeA, 1)
	c := dialRaw(t, g.a.Addr())
	keys, features := advertisedKeys(c)
	if want := []string{"group.version", "streams.version", "transaction.version", "group.version", "streams.version", "transaction.version"}; !slices.Equal(sortedFeatures(features), sortedFeatures(want)) {
		t.Errorf("cluster mode advertises features %v, want group.version, streams.version and transaction.version", features)
	}
	for _, a := range apis {
		max, advertised := keys[a.key]
		if hidden := slices.Contains(notInClusterKeys, a.key); advertised == hidden {
			t.Errorf("%s advertised: %v", apiName(a.key), advertised)
		}
		if advertised && max != a.max {
			t.Errorf("%s advertised up to v%d, want v%d", apiName(a.key), max, a.max)
		}
	}
	for _, key := range []int16{0, 26, 28} { // The versions of KIP-890 part 2
		if a, ok := g.a.lookupAPI(key); !ok || a.max != lookupAPIMax(key) {
			t.Errorf("cluster mode dispatches %s up to v%d", apiName(key), a.max)
		}
	}

	// Unknown to dispatch, as any unadvertised API: its request closes the
	// connection (whatever its handler would do).
	for _, k := range notInClusterKeys {
		if _, ok := g.a.lookupAPI(k); ok {
			t.Errorf("cluster mode dispatches %s", apiName(k))
		}
	}
	sgh := kmsg.NewPtrShareGroupHeartbeatRequest()
	sgh.GroupID = "sg"
	c.send(8, sgh)
	c.expectClosed()

	// Without Cluster everything is advertised, as before.
	single := startServer(t, Config{Resolver: openResolver(t), Telemetry: testTelemetry(t)})
	keys, features = advertisedKeys(dialRaw(t, single.Addr()))
	for _, a := range apis {
		if keys[a.key] != a.max {
			t.Errorf("single node advertises %s up to v%d", apiName(a.key), keys[a.key])
		}
	}
	if !slices.Contains(features, transactionVersionFeature) || !slices.Contains(features, shareVersionFeature) {
		t.Errorf("single node features %v", features)
	}
}

// Topic changes through the catalog: every topic change goes through the cluster's catalog, which every
// node applies.
func TestClusterCatalog(t *testing.T) {
	g := newClusterRig(t, nil)
	adm := kadm.NewClient(g.clusterClient())
	ctx := testCtx(t)
	cat := g.cl.catalog
	exists := func(name string, parts int32) {
		t.Helper()
		for i, res := range []*resolver.Resolver{g.resA, g.resB} {
			if n, ok := res.Partitions(name); !ok || n != parts {
				t.Errorf("node %d: %s has %d partitions (exists %v), want %d", i, name, n, ok, parts)
			}
		}
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "c"); err != nil {
		t.Fatal(err)
	}
	exists("c", 2)
	if _, err := adm.CreatePartitions(ctx, 1, "c"); err != nil {
		t.Fatal(err)
	}
	exists("c", 3)
	retention := "1000"
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &retention}}, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: &retention}}, "c"); err != nil {
		t.Fatal(err)
	}

	// Auto-creation by Metadata and by Produce.
	c := dialRaw(t, g.a.Addr())
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(9)
	md.AllowAutoTopicCreation = true
	name := "auto-md"
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	// The creating request is answered without the topic, as Kafka does.
	if r := ask(c, md).(*kmsg.MetadataResponse); r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || len(r.Topics[0].Partitions) != 0 {
		t.Errorf("auto-create by Metadata: error %d, %d partitions", r.Topics[0].ErrorCode, len(r.Topics[0].Partitions))
	}
	waitFor(t, "auto-md created on both nodes", func() bool { // the creation runs on after the answer
		_, onA := g.resA.Partitions("auto-md")
		_, onB := g.resB.Partitions("auto-md")
		return onA && onB
	})
	exists("auto-md", 1)
	// Produce never creates, as in Kafka 4.
	if p := ask(c, produceReq(9, "auto-produce", 0)).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("produce to a missing topic: error %d", p.ErrorCode)
	}
	if _, ok := g.resA.Partitions("auto-produce"); ok {
		t.Error("produce created a topic")
	}

	if _, err := adm.DeleteTopic(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	for _, res := range []*resolver.Resolver{g.resA, g.resB} {
		if _, ok := res.Partitions("c"); ok {
			t.Error("deleted topic still on a node")
		}
	}
	for m, want := range map[string]int{"CreateTopic": 1, "CreatePartitions": 1, "IncrementalAlterTopicConfigs": 1,
		"AlterTopicConfigs": 1, "EnsureTopic": 1, "DeleteTopic": 1} {
		if got := cat.called(m); got != want {
			t.Errorf("catalog %s called %d times, want %d", m, got, want)
		}
	}
}

// Without Cluster a server is the single node it always was: it leads
// every partition at epoch 0, is the controller and the coordinator.
func TestNoClusterSingleNode(t *testing.T) {
	res := openResolver(t)
	if _, err := res.CreateTopic("t", 2, 1, nil, false); err != nil {
		t.Fatal(err)
	}
	offs, err := offsets.Open(filepath.Join(t.TempDir(), "offsets"), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { offs.Close() })
	s := startServer(t, Config{Resolver: res, Offsets: offs, NodeID: 3})
	c := dialRaw(t, s.Addr())
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	name := "t"
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	r := ask(c, md).(*kmsg.MetadataResponse)
	if len(r.Brokers) != 1 || r.Brokers[0].NodeID != 3 || r.ControllerID != 3 {
		t.Errorf("brokers %+v controller %d", r.Brokers, r.ControllerID)
	}
	for _, p := range r.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Leader != 3 || p.LeaderEpoch != 0 || !slices.Equal(p.Replicas, []int32{3}) {
			t.Errorf("partition %+v", p)
		}
	}
	if p := fetchOne(c, 12, "t", 1, 1); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("fetch at epoch 1: error %d", p.ErrorCode)
	}
	for _, req := range groupRequests() {
		for _, code := range groupErrors(ask(c, req)) {
			if code == kerr.NotCoordinator.Code {
				t.Errorf("%s: NOT_COORDINATOR on a single node", apiName(req.Key()))
			}
		}
	}
}

// Verification across nodes: a transactional batch the leader's resolver refuses as not
// registered is checked with the cluster: registered, it is appended;
// not registered, INVALID_TXN_STATE stands; etcd unable to tell,
// NOT_ENOUGH_REPLICAS, which the client retries instead of failing the
// batch.
func TestClusterProduceVerifiesTxn(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 1})
	g.cl.lead("t", 0, nodeA, 1)
	c := dialRaw(t, g.a.Addr())
	produce := func(seq int32) int16 {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(10) // v11+ answers TRANSACTION_ABORTABLE instead (TestProduceTxnAbortable)
		id := "tx"
		req.TransactionID, req.Acks, req.TimeoutMillis = &id, -1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 0, txnRecords(1, 42, 0, seq, "v")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return ask(c, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	setVerify := func(f func(string, int32, int64, int16) (bool, error)) {
		g.cl.mu.Lock()
		g.cl.verify = f
		g.cl.mu.Unlock()
	}
	if code := produce(0); code != kerr.InvalidTxnState.Code {
		t.Errorf("unregistered, no verification: error %d", code)
	}
	setVerify(func(string, int32, int64, int16) (bool, error) { return false, errors.New("etcd unreachable") })
	if code := produce(0); code != kerr.NotEnoughReplicas.Code {
		t.Errorf("verification failed: error %d, want NOT_ENOUGH_REPLICAS", code)
	}
	setVerify(func(string, int32, int64, int16) (bool, error) { return false, nil })
	if code := produce(0); code != kerr.InvalidTxnState.Code {
		t.Errorf("not registered: error %d, want INVALID_TXN_STATE", code)
	}
	setVerify(func(topic string, p int32, pid int64, epoch int16) (bool, error) {
		return true, g.resA.AddTxnPartition(topic, p, pid, epoch)
	})
	if code := produce(0); code != 0 {
		t.Errorf("registered: error %d", code)
	}
}

// Streams groups (KIP-1071) in cluster mode are the group coordinator's,
// as consumer groups (coordinator routing): the coordinator node takes a member's join
// and describes the group; another node answers NOT_COORDINATOR
// (TestClusterCoordinator). That their state survives a move of the
// coordinator is test/cluster's TestClusterStreamsGroupCoordinatorMoves.
func TestClusterStreamsGroupOnCoordinator(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 2})
	g.cl.lead("t", 0, nodeA, 1)
	g.cl.lead("t", 1, nodeB, 1)
	b := dialRaw(t, g.b.Addr())
	resp := ask(b, streamsJoinRequest("sg", "t")).(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode != 0 || resp.MemberEpoch < 1 {
		t.Fatalf("streams join on the coordinator: error %d epoch %d", resp.ErrorCode, resp.MemberEpoch)
	}
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{"sg"}
	dr := ask(b, d).(*kmsg.StreamsGroupDescribeResponse)
	if len(dr.Groups) != 1 || dr.Groups[0].ErrorCode != 0 || len(dr.Groups[0].Members) != 1 {
		t.Fatalf("describe on the coordinator: %+v", dr.Groups)
	}
	a := dialRaw(t, g.a.Addr())
	if code := ask(a, streamsJoinRequest("sg", "t")).(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("streams join on another node: error %d", code)
	}
	// Levels are per node: no group protocol can be turned off on one.
	for _, feature := range []string{"streams.version", "group.version"} {
		uf := kmsg.NewPtrUpdateFeaturesRequest()
		fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		fu.Feature, fu.MaxVersionLevel, fu.UpgradeType = feature, 0, 2
		uf.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{fu}
		if code := ask(b, uf).(*kmsg.UpdateFeaturesResponse).ErrorCode; code != kerr.InvalidUpdateVersion.Code {
			t.Fatalf("UpdateFeatures %s in cluster mode: error %d", feature, code)
		}
	}
}
