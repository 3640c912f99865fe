package test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Helpers of the share-group tests (share_test.go, share_kill_test.go).

// setGroupConfigs sets configs of a group (the GROUP config resource).
func setGroupConfigs(t *testing.T, addr, group string, kvs ...string) {
	t.Helper()
	cl := shareClient(t, addr)
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i < len(kvs); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kvs[i], kmsg.StringPtr(kvs[i+1])
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp := request[*kmsg.IncrementalAlterConfigsResponse](t, cl, req)
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		t.Fatalf("set group configs %v: %v", kvs, err)
	}
}

func shareClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceNumbered writes values "0".."n-1" to partition 0 of topic.
func produceNumbered(t *testing.T, addr, topic string, n int) {
	t.Helper()
	cl := shareClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: topic, Partition: 0, Value: []byte(strconv.Itoa(i))}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// shareOffset is the share-partition start offset of group on topic/0
// (-1 when the group never read it).
func shareOffset(t *testing.T, addr, group, topic string) int64 {
	t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp := request[*kmsg.DescribeShareGroupOffsetsResponse](t, shareClient(t, addr), req)
	p := resp.Groups[0].Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatalf("describe share offsets: %v", err)
	}
	return p.StartOffset
}

// waitFor polls cond until it holds, failing at the test deadline. The
// conditions are states of the server seen through requests; the wait
// between polls is a poll interval, not a wait for something to happen.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shareLedger tallies what share consumers saw: per value, deliveries,
// accepts and the delivery counts they came with.
type shareLedger struct {
	mu        sync.Mutex
	delivered map[int]int
	accepted  map[int]int
	counts    map[int][]int32
	by        map[string]int // records delivered per member
}

func newShareLedger() *shareLedger {
	return &shareLedger{delivered: map[int]int{}, accepted: map[int]int{}, counts: map[int][]int32{}, by: map[string]int{}}
}

func (l *shareLedger) saw(member string, r *kgo.Record) int {
	v, err := strconv.Atoi(string(r.Value))
	if err != nil {
		panic(fmt.Sprintf("bad value %q", r.Value))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delivered[v]++
	l.counts[v] = append(l.counts[v], r.DeliveryCount())
	l.by[member]++
	return v
}

func (l *shareLedger) accept(v int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepted[v]++
}

func (l *shareLedger) acceptedAll(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted) == n
}

// runShareMember polls a franz-go share consumer until ctx ends, deciding
// each record's acknowledgement with decide (the member name is for the
// tally).
func runShareMember(ctx context.Context, t *testing.T, addr, group, topic, name string, l *shareLedger, decide func(v int, r *kgo.Record) kgo.AckStatus, opts ...kgo.Opt) *sync.WaitGroup {
	cl := shareClient(t, addr, append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ShareMaxRecords(10)}, opts...)...)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			for _, r := range fs.Records() {
				v := l.saw(name, r)
				st := decide(v, r)
				r.Ack(st)
				if st == kgo.AckAccept {
					l.accept(v)
				}
			}
		}
		// Flush what was acknowledged last, as a member does on close.
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = cl.FlushAcks(fctx)
	}()
	return &wg
}

// rawMember is a share-group member driven by hand with kmsg requests, so
// a test decides exactly when it fetches and never acknowledges.
type rawMember struct {
	t      *testing.T
	cl     *kgo.Client
	group  string
	id     string
	epoch  int32
	topic  [16]byte
	sepoch int32
}

func joinRaw(t *testing.T, addr, group, topic, id string) *rawMember {
	t.Helper()
	m := &rawMember{t: t, cl: shareClient(t, addr), group: group, id: id}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = group, id, []string{topic}
	resp := request[*kmsg.ShareGroupHeartbeatResponse](t, m.cl, req)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("join %s: %v", id, err)
	}
	m.epoch = resp.MemberEpoch
	if resp.Assignment == nil || len(resp.Assignment.TopicPartitions) != 1 {
		t.Fatalf("join %s: assignment %+v", id, resp.Assignment)
	}
	m.topic = resp.Assignment.TopicPartitions[0].TopicID
	return m
}

// fetch acquires records of partition 0, waiting up to wait for some, and
// returns the acquired offsets with their delivery counts.
func (m *rawMember) fetch(wait time.Duration) map[int64]int16 {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = &m.group, &m.id
	req.ShareSessionEpoch, req.MaxWaitMillis, req.MaxBytes, req.MaxRecords = m.sepoch, int32(wait.Milliseconds()), 1<<20, 1000
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.topic
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	if m.sepoch == 0 {
		req.Topics = append(req.Topics, rt)
	}
	resp := request[*kmsg.ShareFetchResponse](m.t, m.cl, req)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("share fetch: %v", err)
	}
	m.sepoch++
	out := map[int64]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				m.t.Fatalf("share fetch partition: %v", err)
			}
			for _, ar := range p.AcquiredRecords {
				for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
					out[o] = ar.DeliveryCount
				}
			}
		}
	}
	return out
}
