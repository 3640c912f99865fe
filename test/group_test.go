package test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupMember is a franz-go group consumer that polls in the background
// and tracks which partitions it owns through the rebalance callbacks.
type groupMember struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	owned    map[int32]bool
	revokes  int
	assigned int
	first    map[int32]int64 // first offset consumed per partition
	consumed int
	seen     map[string]int // how often each record value was consumed
}

func (g *gateway) groupMember(t *testing.T, groupID, topic string, opts ...kgo.Opt) *groupMember {
	t.Helper()
	return newGroupMember(t, g.addr, groupID, topic, opts...)
}

// newGroupMember starts a groupMember against the server at addr.
func newGroupMember(t *testing.T, addr, groupID, topic string, opts ...kgo.Opt) *groupMember {
	t.Helper()
	m := &groupMember{owned: map[int32]bool{}, first: map[int32]int64{}, seen: map[string]int{}, done: make(chan struct{})}
	drop := func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.revokes++
		for _, p := range ps[topic] {
			delete(m.owned, p)
		}
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.ConsumerGroup(groupID),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.assigned++
			for _, p := range ps[topic] {
				m.owned[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(drop),
		kgo.OnPartitionsLost(drop),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cl, m.cancel = cl, cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			m.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if _, ok := m.first[r.Partition]; !ok {
					m.first[r.Partition] = r.Offset
				}
				m.consumed++
				m.seen[string(r.Value)]++
			})
			m.mu.Unlock()
		}
	}()
	t.Cleanup(m.close)
	return m
}

// close stops polling and closes the client (a dynamic member leaves the
// group; a static one does not).
func (m *groupMember) close() {
	m.once.Do(func() {
		m.cancel()
		<-m.done
		m.cl.Close()
	})
}

func (m *groupMember) ownedSet() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int32
	for p := range m.owned {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// eventually waits for cond, polling, bounded by testDeadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by the deadline
	}
}

// ownedExactlyOnce: every partition of 0..n-1 is owned by exactly one of
// ms, and each of ms owns at least one.
func ownedExactlyOnce(n int32, ms ...*groupMember) bool {
	count := map[int32]int{}
	for _, m := range ms {
		set := m.ownedSet()
		if len(set) == 0 {
			return false
		}
		for _, p := range set {
			count[p]++
		}
	}
	for p := int32(0); p < n; p++ {
		if count[p] != 1 {
			return false
		}
	}
	return len(count) == int(n)
}

func assignments(ms ...*groupMember) string {
	var b strings.Builder
	for i, m := range ms {
		fmt.Fprintf(&b, "member %d owns %v; ", i, m.ownedSet())
	}
	return b.String()
}

// Two consumers split a topic's partitions, a third joins, one leaves:
// every partition is owned exactly once after each step, with the eager
// range balancer and the cooperative-sticky one.
func TestGroupBalancers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"range", kgo.RangeBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t)
			const parts = 6
			topic := "bal-" + tc.name
			g.createTopic(topic, parts)
			groupID := "g-" + tc.name
			a := g.groupMember(t, groupID, topic, kgo.Balancers(tc.balancer))
			b := g.groupMember(t, groupID, topic, kgo.Balancers(tc.balancer))
			eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
			c := g.groupMember(t, groupID, topic, kgo.Balancers(tc.balancer))
			eventually(t, "three members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b, c) })
			a.close()
			eventually(t, "two remaining members own every partition", func() bool { return ownedExactlyOnce(parts, b, c) })
			t.Logf("final: %s", assignments(b, c))

			described, err := g.admin().DescribeGroups(testCtx(t), groupID)
			if err != nil {
				t.Fatal(err)
			}
			dg := described[groupID]
			if dg.State != "Stable" || len(dg.Members) != 2 || dg.Protocol != tc.balancer.ProtocolName() {
				t.Fatalf("described %s, %d members, protocol %q", dg.State, len(dg.Members), dg.Protocol)
			}
		})
	}
}

// produceTo writes n records to each partition of topic.
func produceTo(t *testing.T, g *gateway, topic string, parts int32, n int) {
	t.Helper()
	cl := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p := int32(0); p < parts; p++ {
		for i := 0; i < n; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "p%d-%d", p, i)})
		}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// Committed offsets survive a restart and a new consumer resumes exactly
// there (O2); the metadata string comes back through kadm.
func TestGroupCommitRestartResume(t *testing.T) {
	g := newGateway(t)
	const topic, groupID = "resume", "resume-g"
	g.createTopic(topic, 2)
	produceTo(t, g, topic, 2, 10)

	adm := g.admin()
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 4, LeaderEpoch: -1, Metadata: "four"})
	offs.Add(kadm.Offset{Topic: topic, Partition: 1, At: 7, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(testCtx(t), groupID, offs)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}

	g.restart()
	fetched, err := g.admin().FetchOffsets(testCtx(t), groupID)
	if err != nil || fetched.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, fetched.Error())
	}
	if o, _ := fetched.Lookup(topic, 0); o.At != 4 || o.Metadata != "four" {
		t.Fatalf("partition 0 after restart: %+v", o)
	}
	if o, _ := fetched.Lookup(topic, 1); o.At != 7 {
		t.Fatalf("partition 1 after restart: %+v", o)
	}
	listed, err := g.admin().ListGroups(testCtx(t))
	if err != nil || len(listed.Groups()) != 1 {
		t.Fatalf("list after restart: %v %v", err, listed)
	}

	m := g.groupMember(t, groupID, topic, kgo.DisableAutoCommit())
	eventually(t, "consumer resumes on both partitions", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.consumed >= 9 && len(m.first) == 2
	})
	m.mu.Lock()
	first := map[int32]int64{0: m.first[0], 1: m.first[1]}
	m.mu.Unlock()
	if first[0] != 4 || first[1] != 7 {
		t.Fatalf("resumed at %v, want 4 and 7", first)
	}

	// The consumer commits its progress; a restart keeps it.
	if err := m.cl.CommitUncommittedOffsets(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	m.close()
	g.restart()
	fetched, err = g.admin().FetchOffsets(testCtx(t), groupID)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fetched.Lookup(topic, 0); o.At != 10 {
		t.Fatalf("partition 0 after consuming: %+v", o)
	}
}

// A member that stops heartbeating is evicted after its session timeout
// and its partitions go to the member that is still alive.
func TestGroupSessionEviction(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: group.Config{MinSessionTimeout: 100 * time.Millisecond}})
	const topic, groupID, parts = "evict", "evict-g", 4
	g.createTopic(topic, parts)
	alive := g.groupMember(t, groupID, topic, kgo.Balancers(kgo.RangeBalancer()))
	eventually(t, "first member owns everything", func() bool { return ownedExactlyOnce(parts, alive) })

	// A hand-driven member joins, syncs once and then goes silent.
	raw := g.client()
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType = groupID, "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 1000, 10000
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{topic}
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta.AppendTo(nil)}}
	jr := request[*kmsg.JoinGroupResponse](t, raw, join)
	if jr.ErrorCode == kerr.MemberIDRequired.Code {
		join.MemberID = jr.MemberID
		jr = request[*kmsg.JoinGroupResponse](t, raw, join)
	}
	if jr.ErrorCode != 0 {
		t.Fatalf("raw join: %v", kerr.ErrorForCode(jr.ErrorCode))
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = groupID, jr.MemberID, jr.Generation
	sync.ProtocolType, sync.Protocol = jr.ProtocolType, jr.Protocol // mandatory from v5
	sr := request[*kmsg.SyncGroupResponse](t, raw, sync)
	if sr.ErrorCode != 0 {
		t.Fatalf("raw sync: %v", kerr.ErrorForCode(sr.ErrorCode))
	}
	// The live member gives up partitions: the raw member got some in this
	// generation. (Not by polling the live member's owned set: it owns
	// fewer only until the eviction, a window a stalled poll can miss.)
	var rawAssigned kmsg.ConsumerMemberAssignment
	if err := rawAssigned.ReadFrom(sr.MemberAssignment); err != nil || len(rawAssigned.Topics) == 0 ||
		len(rawAssigned.Topics[0].Partitions) == 0 {
		t.Fatalf("raw member assigned %+v (%v), want some of %s", rawAssigned.Topics, err, topic)
	}
	eventually(t, "the live member is assigned in the new generation", func() bool {
		alive.mu.Lock()
		defer alive.mu.Unlock()
		return alive.assigned >= 2
	})

	// No heartbeats from the raw member: after 1s it is removed.
	eventually(t, "the silent member is evicted", func() bool { return ownedExactlyOnce(parts, alive) })
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = groupID, jr.MemberID, jr.Generation
	if c := request[*kmsg.HeartbeatResponse](t, raw, hb).ErrorCode; c != kerr.UnknownMemberID.Code {
		t.Fatalf("evicted member heartbeat: %v", kerr.ErrorForCode(c))
	}
	described, err := g.admin().DescribeGroups(testCtx(t), groupID)
	if err != nil || len(described[groupID].Members) != 1 {
		t.Fatalf("describe after eviction: %v %+v", err, described[groupID])
	}
}

// A static member (group.instance.id) that restarts within its session
// timeout gets its partitions back without a rebalance: the other member
// sees no revocation.
func TestGroupStaticMemberRejoin(t *testing.T) {
	g := newGateway(t)
	const topic, groupID, parts = "static", "static-g", 4
	g.createTopic(topic, parts)
	opts := func(id string) []kgo.Opt {
		return []kgo.Opt{kgo.InstanceID(id), kgo.Balancers(kgo.RangeBalancer()), kgo.SessionTimeout(20 * time.Second)}
	}
	a := g.groupMember(t, groupID, topic, opts("static-a")...)
	b := g.groupMember(t, groupID, topic, opts("static-b")...)
	eventually(t, "static members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	aOwned := a.ownedSet()
	b.mu.Lock()
	bRevokes, bAssigned := b.revokes, b.assigned
	b.mu.Unlock()

	a.close() // static: no LeaveGroup
	a2 := g.groupMember(t, groupID, topic, opts("static-a")...)
	eventually(t, "restarted static member owns its partitions", func() bool { return ownedExactlyOnce(parts, a2, b) })
	if got := a2.ownedSet(); fmt.Sprint(got) != fmt.Sprint(aOwned) {
		t.Fatalf("restarted static member owns %v, had %v", got, aOwned)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.revokes != bRevokes || b.assigned != bAssigned {
		t.Fatalf("the other member went through a rebalance (revokes %d->%d, assigns %d->%d)", bRevokes, b.revokes, bAssigned, b.assigned)
	}
}

// kcat -G consumes as a balanced (librdkafka) group consumer and commits.
func TestGroupKcat(t *testing.T) {
	g := newGateway(t)
	const topic, groupID = "kcatg", "kcat-g"
	g.createTopic(topic, 2)
	produceTo(t, g, topic, 2, 5)
	out := kcat(t, g.addr, "", "-G", groupID, "-X", "auto.offset.reset=earliest", "-e", "-f", "%p:%o\n", topic)
	if lines := strings.Fields(out); len(lines) != 10 {
		t.Fatalf("kcat -G printed %d records:\n%s", len(lines), out)
	}
	fetched, err := g.admin().FetchOffsets(testCtx(t), groupID)
	if err != nil || fetched.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, fetched.Error())
	}
	for p := int32(0); p < 2; p++ {
		if o, ok := fetched.Lookup(topic, p); !ok || o.At != 5 {
			t.Fatalf("kcat committed partition %d: %+v %v", p, o, ok)
		}
	}
}

// kadm's group admin calls, and the errors bad input gets.
func TestGroupAdminAndErrors(t *testing.T) {
	g := newGateway(t)
	const topic, groupID = "adm", "adm-g"
	g.createTopic(topic, 3)
	produceTo(t, g, topic, 3, 2)
	m := g.groupMember(t, groupID, topic)
	eventually(t, "member owns the partitions", func() bool { return ownedExactlyOnce(3, m) })
	eventually(t, "member consumed", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.consumed == 6
	})
	if err := m.cl.CommitUncommittedOffsets(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	adm := g.admin()
	ctx := testCtx(t)

	listed, err := adm.ListGroups(ctx)
	if err != nil || len(listed.Groups()) != 1 || listed.Groups()[0] != groupID {
		t.Fatalf("list: %v %v", err, listed.Groups())
	}
	described, err := adm.DescribeGroups(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	dg := described[groupID]
	if dg.State != "Stable" || dg.ProtocolType != "consumer" || len(dg.Members) != 1 {
		t.Fatalf("describe: %+v", dg)
	}
	ca, ok := dg.Members[0].Assigned.AsConsumer()
	if !ok || len(ca.Topics) != 1 || len(ca.Topics[0].Partitions) != 3 {
		t.Fatalf("described assignment %+v", dg.Members[0].Assigned)
	}
	fetched, err := adm.FetchOffsets(ctx, groupID)
	if err != nil || fetched.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, fetched.Error())
	}
	for p := int32(0); p < 3; p++ {
		if o, _ := fetched.Lookup(topic, p); o.At != 2 {
			t.Fatalf("committed %d: %+v", p, o)
		}
	}

	// Bad input: wrong generation, unknown member, deleting a live group.
	raw := g.client()
	memberID, gen := m.cl.GroupMetadata()
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = groupID, memberID, gen+5
	if c := request[*kmsg.HeartbeatResponse](t, raw, hb).ErrorCode; c != kerr.IllegalGeneration.Code {
		t.Fatalf("wrong generation: %v", kerr.ErrorForCode(c))
	}
	hb.MemberID, hb.Generation = "nobody", gen
	if c := request[*kmsg.HeartbeatResponse](t, raw, hb).ErrorCode; c != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v", kerr.ErrorForCode(c))
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.MemberID, commit.Generation = groupID, memberID, gen+1
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	if c := request[*kmsg.OffsetCommitResponse](t, raw, commit).Topics[0].Partitions[0].ErrorCode; c != kerr.IllegalGeneration.Code {
		t.Fatalf("commit with wrong generation: %v", kerr.ErrorForCode(c))
	}
	deleted, err := adm.DeleteGroups(ctx, groupID)
	if err != nil || deleted[groupID].Err != kerr.NonEmptyGroup {
		t.Fatalf("delete live group: %v %+v", err, deleted)
	}
	deleted, err = adm.DeleteGroups(ctx, "no-such-group")
	if err != nil || deleted["no-such-group"].Err != kerr.GroupIDNotFound {
		t.Fatalf("delete unknown group: %v %+v", err, deleted)
	}

	m.close() // leaves: the group is Empty
	deleted, err = adm.DeleteGroups(ctx, groupID)
	if err != nil || deleted[groupID].Err != nil {
		t.Fatalf("delete empty group: %v %+v", err, deleted)
	}
	fetched, err = adm.FetchOffsets(ctx, groupID)
	if err != nil || len(fetched) != 0 {
		t.Fatalf("offsets after delete: %v %+v", err, fetched)
	}
	if listed, _ := adm.ListGroups(ctx); len(listed.Groups()) != 0 {
		t.Fatalf("groups after delete: %v", listed.Groups())
	}
}
