package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfstest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restartMembers are the two group members the restart tests run: range
// unless a balancer is given (eager, so any rebalance revokes everything
// and shows in the counts), a session long enough to outlast the restart.
func restartMembers(t *testing.T, addr, groupID, topic string, balancer ...kgo.GroupBalancer) (*groupMember, *groupMember) {
	t.Helper()
	if len(balancer) == 0 {
		balancer = []kgo.GroupBalancer{kgo.RangeBalancer()}
	}
	opts := []kgo.Opt{kgo.Balancers(balancer...), kgo.SessionTimeout(20 * time.Second)}
	return newGroupMember(t, addr, groupID, topic, opts...), newGroupMember(t, addr, groupID, topic, opts...)
}

// memberView is what a member knows of its place in the group.
type memberView struct {
	id                string
	generation        int32
	revokes, assigned int
}

func viewOf(m *groupMember) memberView {
	id, gen := m.cl.GroupMetadata()
	m.mu.Lock()
	defer m.mu.Unlock()
	return memberView{id: id, generation: gen, revokes: m.revokes, assigned: m.assigned}
}

func (v memberView) String() string {
	return fmt.Sprintf("%s gen %d revokes %d assigned %d", v.id, v.generation, v.revokes, v.assigned)
}

func consumedBy(ms ...*groupMember) int {
	n := 0
	for _, m := range ms {
		m.mu.Lock()
		n += m.consumed
		m.mu.Unlock()
	}
	return n
}

// produceAddr writes n records to each partition of topic at addr.
func produceAddr(t *testing.T, addr, topic string, parts int32, n int, tag string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for p := int32(0); p < parts; p++ {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-p%d-%d", tag, p, i)})
		}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// checkNoRebalance: after the server came back, both members consumed
// what was produced since, the server accepts each member's id and
// generation (heartbeat and offset commit), and neither member went
// through a rebalance: same generation, no revoke or assignment, every
// partition owned exactly once (classic membership restored at restart).
func checkNoRebalance(t *testing.T, addr, groupID, topic string, parts int32, before []memberView, ms ...*groupMember) {
	t.Helper()
	raw, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for i, m := range ms {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = groupID, before[i].id, before[i].generation
		if c := request[*kmsg.HeartbeatResponse](t, raw, hb).ErrorCode; c != 0 {
			t.Fatalf("member %d heartbeat after the restart: %v", i, kerr.ErrorForCode(c))
		}
		commit := kmsg.NewPtrOffsetCommitRequest()
		commit.Group, commit.MemberID, commit.Generation = groupID, before[i].id, before[i].generation
		owned := m.ownedSet()
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.Topic = topic
		ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: owned[0], Offset: 1, LeaderEpoch: -1}}
		commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
		if c := request[*kmsg.OffsetCommitResponse](t, raw, commit).Topics[0].Partitions[0].ErrorCode; c != 0 {
			t.Fatalf("member %d commit after the restart: %v", i, kerr.ErrorForCode(c))
		}
	}
	if n := consumedBy(ms...); n != 2*int(parts)*5 {
		t.Fatalf("%d records consumed, want %d: some were consumed twice", n, 2*parts*5)
	}
	if !ownedExactlyOnce(parts, ms...) {
		t.Fatalf("after the restart: %s", assignments(ms...))
	}
	for i, m := range ms {
		if after := viewOf(m); after != before[i] {
			t.Fatalf("member %d went through a rebalance: before %v, after %v", i, before[i], after)
		}
	}
}

// Classic membership restored at restart: two franz-go members consume through a server restart with no
// rebalance and no partition owned twice, with the eager range balancer
// and the cooperative-sticky one.
func TestGroupMembersSurviveRestart(t *testing.T) {
	for _, balancer := range []kgo.GroupBalancer{kgo.RangeBalancer(), kgo.CooperativeStickyBalancer()} {
		t.Run(balancer.ProtocolName(), func(t *testing.T) {
			g := newGateway(t)
			const parts = 4
			topic, groupID := "survive-"+balancer.ProtocolName(), "survive-g-"+balancer.ProtocolName()
			g.createTopic(topic, parts)
			a, b := restartMembers(t, g.addr, groupID, topic, balancer)
			eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
			produceAddr(t, g.addr, topic, parts, 5, "before")
			eventually(t, "members consume", func() bool { return consumedBy(a, b) == parts*5 })
			before := []memberView{viewOf(a), viewOf(b)}

			g.restart()
			produceAddr(t, g.addr, topic, parts, 5, "after")
			eventually(t, "members consume after the restart", func() bool { return consumedBy(a, b) >= 2*parts*5 })
			checkNoRebalance(t, g.addr, groupID, topic, parts, before, a, b)
		})
	}
}

// Classic membership restored at restart through SIGKILL of the real binary, restarted on the same address:
// the members go on without a rebalance.
func TestGroupMembersSurviveKill(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	addr := p.addr
	const topic, groupID, parts = "kill-survive", "kill-survive-g", 4
	createTopicAt(t, addr, topic, parts)
	a, b := restartMembers(t, addr, groupID, topic)
	eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	produceAddr(t, addr, topic, parts, 5, "before")
	eventually(t, "members consume", func() bool { return consumedBy(a, b) == parts*5 })
	before := []memberView{viewOf(a), viewOf(b)}

	p.cmd.Process.Kill()
	<-p.done
	p = startBinary(t, dir, "--listen", addr)
	produceAddr(t, addr, topic, parts, 5, "after")
	eventually(t, "members consume after the kill", func() bool { return consumedBy(a, b) >= 2*parts*5 })
	checkNoRebalance(t, addr, groupID, topic, parts, before, a, b)
	a.close()
	b.close()
	p.stop(t)
}

// createTopicAt creates a topic on the server at addr.
func createTopicAt(t *testing.T, addr, name string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(testCtx(t), partitions, 1, nil, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

// Durable classic membership, classic membership restored at restart through a machine crash (vfstest: only what was synced
// survives), the server reopened on the crash image at the same address:
// the membership the members were answered with was synced, so they go on
// without a rebalance.
func TestGroupMembersSurviveCrash(t *testing.T) {
	m := vfstest.NewMachine(1) // + the offsets store's pebble
	cfg := func(fs crashFS, listen string) server.Config {
		return server.Config{DataDir: "/data", Listen: listen,
			Storage:  storage.Options{FS: fs.files, PebbleFS: fs.index},
			Offsets:  offsets.Options{PebbleFS: fs.group},
			Resolver: resolver.Config{NumPartitions: 1, AutoCreate: true, RetentionCheckInterval: -1}}
	}
	s := startServer(t, cfg(crashFS{m.Files, m.Index, m.Others[0]}, "127.0.0.1:0"))
	addr := s.Addr().String()
	const topic, groupID, parts = "crash-survive", "crash-survive-g", 4
	createTopicAt(t, addr, topic, parts)
	a, b := restartMembers(t, addr, groupID, topic)
	eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	produceAddr(t, addr, topic, parts, 5, "before")
	eventually(t, "members consume", func() bool { return consumedBy(a, b) == parts*5 })
	before := []memberView{viewOf(a), viewOf(b)}

	img := m.Crash(vfstest.PebbleFirst, vfstest.SyncedOnly)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = startServer(t, cfg(crashFS{img.Files, img.Index, img.Others[0]}, addr))
	defer s.Close()
	produceAddr(t, addr, topic, parts, 5, "after")
	eventually(t, "members consume after the crash", func() bool { return consumedBy(a, b) >= 2*parts*5 })
	checkNoRebalance(t, addr, groupID, topic, parts, before, a, b)
	a.close()
	b.close()
}
