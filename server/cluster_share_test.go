package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Share groups in cluster mode (share groups in cluster mode, share reads at the leaders and group configs at the coordinator, share groups in cluster mode,
// fenced share-state writes and the share-state admin reset).

// askNode sends req to node id and fails the test on a transport error.
func askNode[R kmsg.Response](t *testing.T, cl *kgo.Client, id int32, req kmsg.Request) R {
	t.Helper()
	resp, err := tryAskNode(cl, id, req)
	if err != nil {
		t.Fatalf("%T to node %d: %v", req, id, err)
	}
	return resp.(R)
}

func tryAskNode(cl *kgo.Client, id int32, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return cl.Broker(int(id)).Request(ctx, req)
}

// setShareEarliest makes group start at the log start
// (share.auto.offset.reset), at the coordinator, which keeps group configs;
// it returns the coordinator. The role may still be settling as the nodes
// join: it retries.
func setShareEarliest(t *testing.T, c *testCluster, cl *kgo.Client, adm *kadm.Client, group string) int32 {
	t.Helper()
	var coord int32
	eventually(t, "share.auto.offset.reset set", func() error {
		coord = c.coordinator(adm, group)
		return trySetEarliest(t, cl, coord, group)
	})
	return coord
}

func trySetEarliest(t *testing.T, cl *kgo.Client, coord int32, group string) error {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp := askNode[*kmsg.IncrementalAlterConfigsResponse](t, cl, coord, req)
	return kerr.ErrorForCode(resp.Resources[0].ErrorCode)
}

// shareStarts are the share-partition start offsets of group on topic, as
// the coordinator describes them (-1: no state).
func shareStarts(t *testing.T, cl *kgo.Client, coord int32, group, topic string, parts int32) ([]int64, error) {
	t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	rt.Topic = topic
	for p := range parts {
		rt.Partitions = append(rt.Partitions, p)
	}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp := askNode[*kmsg.DescribeShareGroupOffsetsResponse](t, cl, coord, req)
	if err := kerr.ErrorForCode(resp.Groups[0].ErrorCode); err != nil {
		return nil, fmt.Errorf("describe share offsets at node %d: %w", coord, err)
	}
	out := make([]int64, parts)
	for _, p := range resp.Groups[0].Topics[0].Partitions {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return nil, fmt.Errorf("describe share offsets of partition %d: %w", p.Partition, err)
		}
		out[p.Partition] = p.StartOffset
	}
	return out, nil
}

// startSettled starts nodes 1..n, waits until every node sees all n (so
// that placement moves nothing once the topic exists: a leader change
// would rightly deliver the records in flight again, re-reading after a leader change) and creates
// topic.
func startSettled(t *testing.T, n int32, topic string, parts int32) (*testCluster, *kgo.Client, *kadm.Client, context.Context) {
	t.Helper()
	c := newTestCluster(t)
	for id := int32(1); id <= n; id++ {
		c.start(id)
	}
	cl := c.client(kgo.DefaultProduceTopic(topic))
	eventually(t, "every node sees every node", func() error {
		for id := int32(1); id <= n; id++ {
			resp, err := tryAskNode(cl, id, kmsg.NewPtrMetadataRequest())
			if err != nil {
				return err // the client may not know node id yet
			}
			if md := resp.(*kmsg.MetadataResponse); int32(len(md.Brokers)) != n {
				return fmt.Errorf("node %d sees %d nodes", id, len(md.Brokers))
			}
		}
		return nil
	})
	adm := kadm.NewClient(cl)
	ctx := testCtx(t)
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	return c, cl, adm, ctx
}

// TestClusterShareConsumesOnce (share groups in cluster mode, share reads at the leaders, the leader side): two share consumers of one
// group on a 3-node cluster, every record accepted: each record is
// delivered exactly once, though the partitions' leaders are spread over
// the nodes, and the coordinator describes every partition as done.
func TestClusterShareConsumesOnce(t *testing.T) {
	const topic, group, parts, n = "sq", "sg", 4, 120
	c, cl, adm, ctx := startSettled(t, 3, topic, parts)
	leaders := c.waitLeaders(adm, topic, parts)
	setShareEarliest(t, c, cl, adm, group)
	produceN(t, ctx, cl, "v", n)
	for id := int32(1); id <= 3; id++ {
		checkShareAdvertised(t, cl, id)
	}

	var mu sync.Mutex
	delivered := map[string]int{}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		sc := c.client(kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ShareMaxRecords(7))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				for _, r := range sc.PollFetches(cctx).Records() {
					mu.Lock()
					delivered[string(r.Value)]++
					mu.Unlock()
					r.Ack(kgo.AckAccept)
				}
			}
			fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer fcancel()
			_ = sc.FlushAcks(fctx)
		}()
	}
	eventually(t, "every record delivered", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(delivered) < n {
			return fmt.Errorf("%d of %d delivered", len(delivered), n)
		}
		return nil
	})
	eventually(t, "every partition done at the coordinator", func() error {
		starts, err := shareStarts(t, cl, c.coordinator(adm, group), group, topic, parts)
		if err != nil {
			return err
		}
		var sum int64
		for _, s := range starts {
			sum += s
		}
		if sum != n {
			return fmt.Errorf("start offsets sum to %d, want %d", sum, n)
		}
		return nil
	})
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for v, k := range delivered {
		if k != 1 {
			t.Errorf("%s delivered %d times", v, k)
		}
	}
	if len(delivered) != n {
		t.Errorf("%d distinct records delivered, want %d", len(delivered), n)
	}
	t.Logf("partition leaders %v", leaders) // spread by placement (rendezvous placement), not fixed: topic ids are random
}

// checkShareAdvertised requires node id to advertise the share-group APIs
// and share.version (share groups in cluster mode).
func checkShareAdvertised(t *testing.T, cl *kgo.Client, id int32) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	// From v3 a request must name its client (KIP-511), as Kafka checks.
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgateway-test", "1"
	resp := askNode[*kmsg.ApiVersionsResponse](t, cl, id, req)
	keys := map[int16]bool{}
	for _, k := range resp.ApiKeys {
		keys[k.ApiKey] = true
	}
	for _, k := range []int16{76, 77, 78, 79, 90, 91, 92} {
		if !keys[k] {
			t.Errorf("node %d does not advertise API %d", id, k)
		}
	}
	found := false
	for _, f := range resp.FinalizedFeatures {
		// 1, never 2: a cluster serves no dead-letter queues (KIP-1191).
		found = found || f.Name == "share.version" && f.MaxVersionLevel == 1
	}
	for _, f := range resp.SupportedFeatures {
		if f.Name == "share.version" && f.MaxVersion != 1 {
			t.Errorf("node %d supports share.version up to %d, want 1", id, f.MaxVersion)
		}
	}
	if !found {
		t.Errorf("node %d does not advertise share.version at 1: %+v", id, resp.FinalizedFeatures)
	}
}

// rawShare is a share-group member driven with raw requests, so the test
// decides where each request goes and when records stay unacknowledged.
type rawShare struct {
	t      *testing.T
	cl     *kgo.Client
	group  string
	member string
	topic  [16]byte
	sepoch map[int32]int32 // share session epoch per node
}

func (m *rawShare) heartbeat(node int32, epoch int32, topic string) *kmsg.ShareGroupHeartbeatResponse {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = m.group, m.member, epoch
	if epoch == 0 {
		req.SubscribedTopicNames = []string{topic}
	}
	return askNode[*kmsg.ShareGroupHeartbeatResponse](m.t, m.cl, node, req)
}

// fetch acquires from partition 0 at node, returning the partition's
// error code and the acquired offsets with their delivery counts.
func (m *rawShare) fetch(node int32, wait time.Duration) (kmsg.ShareFetchResponseTopicPartition, map[int64]int16) {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 1
	req.GroupID, req.MemberID = &m.group, &m.member
	req.ShareSessionEpoch, req.MaxWaitMillis, req.MaxBytes, req.MaxRecords = m.sepoch[node], int32(wait.Milliseconds()), 1<<20, 1000
	if m.sepoch[node] == 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = m.topic
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
	}
	resp := askNode[*kmsg.ShareFetchResponse](m.t, m.cl, node, req)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("share fetch at node %d: %v", node, err)
	}
	m.sepoch[node]++
	out := map[int64]int16{}
	var part kmsg.ShareFetchResponseTopicPartition
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			part = p
			for _, ar := range p.AcquiredRecords {
				for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
					out[o] = ar.DeliveryCount
				}
			}
		}
	}
	return part, out
}

// acceptAt accepts [first, last] of partition 0 at node.
func (m *rawShare) acceptAt(node int32, first, last int64) {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &m.group, &m.member, m.sepoch[node]
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = m.topic
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, []int8{1}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := askNode[*kmsg.ShareAcknowledgeResponse](m.t, m.cl, node, req)
	m.sepoch[node]++
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("share acknowledge: %v", err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
		m.t.Fatalf("share acknowledge of [%d, %d]: %v", first, last, err)
	}
}

func offsetsOf(got map[int64]int16) []string {
	var out []string
	for o := range int64(100) {
		if c, ok := got[o]; ok {
			out = append(out, fmt.Sprintf("%d(x%d)", o, c))
		}
	}
	return out
}

// TestClusterShareFailover (locks released at restart, share groups in cluster mode, share groups in cluster mode, share reads at the leaders and group configs at the coordinator): records acquired on a
// partition's leader and not acknowledged are delivered again by the next
// leader, with their delivery count one higher, and acknowledged ones are
// not; a node that does not lead the partition answers
// NOT_LEADER_OR_FOLLOWER naming the leader, one that does not coordinate
// answers NOT_COORDINATOR; the coordinator's AlterShareGroupOffsets on
// the empty group acts on the state the leader serves.
func TestClusterShareFailover(t *testing.T) {
	const topic, group = "sf", "fg"
	c, cl, adm, ctx := startSettled(t, 3, topic, 1)
	c.waitLeaders(adm, topic, 1)
	coord := setShareEarliest(t, c, cl, adm, group)
	produceN(t, ctx, cl, "r", 10)

	m := &rawShare{t: t, cl: cl, group: group, member: "member-1", sepoch: map[int32]int32{}}
	other := int32(1)
	for other == coord {
		other++
	}
	if r := m.heartbeat(other, 0, topic); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat at node %d, not the coordinator %d: error %d, want NOT_COORDINATOR", other, coord, r.ErrorCode)
	}
	if err := trySetEarliest(t, cl, other, group); err != kerr.NotCoordinator {
		t.Fatalf("group configs set at node %d, not the coordinator %d: %v, want NOT_COORDINATOR", other, coord, err)
	}
	hb := m.heartbeat(coord, 0, topic)
	if err := kerr.ErrorForCode(hb.ErrorCode); err != nil || hb.Assignment == nil || len(hb.Assignment.TopicPartitions) != 1 {
		t.Fatalf("join: %v %+v", err, hb.Assignment)
	}
	m.topic = hb.Assignment.TopicPartitions[0].TopicID

	// Placement may still be settling: ask until the node Metadata names
	// answers as the leader, and a follower names it.
	var lead int32
	var got map[int64]int16
	eventually(t, "the leader acquires", func() error {
		lead = c.waitLeaders(adm, topic, 1)[0]
		follower := int32(1)
		for follower == lead {
			follower++
		}
		delete(m.sepoch, follower)
		p, none := m.fetch(follower, 0)
		if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != lead || len(none) != 0 {
			return fmt.Errorf("share fetch at node %d, not the leader %d: error %d, current leader %d, acquired %v",
				follower, lead, p.ErrorCode, p.CurrentLeader.LeaderID, offsetsOf(none))
		}
		delete(m.sepoch, lead)
		if p, got = m.fetch(lead, 5*time.Second); p.ErrorCode != 0 {
			return fmt.Errorf("share fetch at the leader %d: error %d", lead, p.ErrorCode)
		}
		return nil
	})
	if len(got) != 10 {
		t.Fatalf("first fetch at the leader acquired %v, want 0..9", offsetsOf(got))
	}
	m.acceptAt(lead, 0, 4)

	c.stop(lead) // 5..9 stay acquired; the partition moves
	cl2 := c.client()
	adm2 := kadm.NewClient(cl2)
	next := c.waitMoved(adm2, topic, 0, lead)
	m.cl = cl2
	delete(m.sepoch, next)
	var again map[int64]int16
	eventually(t, "records redelivered by the new leader", func() error {
		p, got := m.fetch(next, time.Second)
		if p.ErrorCode != 0 {
			delete(m.sepoch, next) // a new session, as a client after an error
			return fmt.Errorf("error %d", p.ErrorCode)
		}
		if len(got) == 0 {
			return fmt.Errorf("nothing acquired")
		}
		again = got
		return nil
	})
	if len(again) != 5 {
		t.Fatalf("the new leader delivered %v, want 5..9 only", offsetsOf(again))
	}
	for o := int64(5); o <= 9; o++ {
		if again[o] != 2 {
			t.Fatalf("the new leader delivered %v, want 5..9 with delivery count 2", offsetsOf(again))
		}
	}
	m.acceptAt(next, 5, 9)

	// Alter at the coordinator, on the empty group: the leader serves it.
	// The coordinator may have moved with the stopped node.
	eventually(t, "the coordinator describes the acknowledged state", func() error {
		coord = c.coordinator(adm2, group)
		starts, err := shareStarts(t, cl2, coord, group, topic, 1)
		if err != nil {
			return err
		}
		if starts[0] != 10 {
			t.Fatalf("the coordinator describes start offset %d, want 10", starts[0])
		}
		return nil
	})
	if r := m.heartbeat(coord, -1, topic); r.ErrorCode != 0 && r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave: error %d", r.ErrorCode)
	}
	alter := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	alter.GroupID = group
	at := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	at.Topic = topic
	ap := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
	ap.Partition, ap.StartOffset = 0, 7
	at.Partitions = append(at.Partitions, ap)
	alter.Topics = append(alter.Topics, at)
	ar := askNode[*kmsg.AlterShareGroupOffsetsResponse](t, cl2, coord, alter)
	if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
		t.Fatalf("alter share offsets: %v", err)
	}
	if err := kerr.ErrorForCode(ar.Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatalf("alter share offsets of partition 0: %v", err)
	}
	m.member = "member-2"
	m.sepoch = map[int32]int32{}
	eventually(t, "the altered offsets served by the leader", func() error {
		_, got := m.fetch(next, 200*time.Millisecond)
		if len(got) == 0 {
			return fmt.Errorf("nothing acquired")
		}
		again = got
		return nil
	})
	if len(again) != 3 || again[7] != 1 || again[8] != 1 || again[9] != 1 {
		t.Fatalf("after the alter the leader delivered %v, want 7..9 once each", offsetsOf(again))
	}
}
