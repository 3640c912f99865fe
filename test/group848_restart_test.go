package test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// check848NoRebalance: after the server came back, the members consumed
// what was produced since, exactly once, each partition is owned exactly
// once, and no member changed member id or epoch or went through a
// revocation or a new assignment (consumer groups restored at restart).
func check848NoRebalance(t *testing.T, parts int32, before []memberView, ms ...*groupMember) {
	t.Helper()
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

// churn848 has a third member join and leave, so that the group epoch
// before a restart is one a group rebuilt from scratch would not reach
// with two members; a and b own every partition again afterwards.
func churn848(t *testing.T, addr, groupID, topic, assignor string, w *ownershipWatch, a, b *groupMember) {
	t.Helper()
	c := member848(t, addr, groupID, topic, assignor)
	w.add(c)
	eventually(t, "three members split the partitions", func() bool { return ownedExactlyOnce(4, a, b, c) })
	c.close()
	eventually(t, "two members own the partitions again", func() bool { return ownedExactlyOnce(4, a, b) })
}

// groupEpoch is the consumer group's epoch as ConsumerGroupDescribe has it.
func groupEpoch(t *testing.T, addr, groupID string) int32 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	described, err := kadm.NewClient(cl).DescribeConsumerGroups(testCtx(t), groupID)
	if err != nil {
		t.Fatal(err)
	}
	dg := described[groupID]
	if dg.Err != nil {
		t.Fatalf("describe %s: %v", groupID, dg.Err)
	}
	return dg.Epoch
}

// Consumer groups restored at restart: two KIP-848 members consume through a server restart with no
// reassignment and no partition owned twice.
func Test848MembersSurviveRestart(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fast848()})
	const parts = 4
	topic, groupID := "survive848", "survive848-g"
	g.createTopic(topic, parts)
	a := member848(t, g.addr, groupID, topic, "range")
	b := member848(t, g.addr, groupID, topic, "range")
	w := watchOwnership(t, a, b)
	eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	churn848(t, g.addr, groupID, topic, "range", w, a, b)
	epoch := groupEpoch(t, g.addr, groupID)
	produceAddr(t, g.addr, topic, parts, 5, "before")
	eventually(t, "members consume", func() bool { return consumedBy(a, b) == parts*5 })
	before := []memberView{viewOf(a), viewOf(b)}

	g.restart()
	produceAddr(t, g.addr, topic, parts, 5, "after")
	eventually(t, "members consume after the restart", func() bool { return consumedBy(a, b) >= 2*parts*5 })
	check848NoRebalance(t, parts, before, a, b)
	if after := groupEpoch(t, g.addr, groupID); after != epoch {
		t.Fatalf("group epoch %d after the restart, %d before", after, epoch)
	}
	w.check(t)()
}

// Consumer groups restored at restart through SIGKILL of the real binary (Kafka's default heartbeat
// interval), restarted on the same address.
func Test848MembersSurviveKill(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	addr := p.addr
	const topic, groupID, parts = "kill848", "kill848-g", 4
	createTopicAt(t, addr, topic, parts)
	a := member848(t, addr, groupID, topic, "uniform")
	b := member848(t, addr, groupID, topic, "uniform")
	w := watchOwnership(t, a, b)
	eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	churn848(t, addr, groupID, topic, "uniform", w, a, b)
	epoch := groupEpoch(t, addr, groupID)
	produceAddr(t, addr, topic, parts, 5, "before")
	eventually(t, "members consume", func() bool { return consumedBy(a, b) == parts*5 })
	before := []memberView{viewOf(a), viewOf(b)}

	p.cmd.Process.Kill()
	<-p.done
	p = startBinary(t, dir, "--listen", addr)
	produceAddr(t, addr, topic, parts, 5, "after")
	eventually(t, "members consume after the kill", func() bool { return consumedBy(a, b) >= 2*parts*5 })
	check848NoRebalance(t, parts, before, a, b)
	if after := groupEpoch(t, addr, groupID); after != epoch {
		t.Fatalf("group epoch %d after the kill, %d before", after, epoch)
	}
	w.check(t)()
	a.close()
	b.close()
	p.stop(t)
}

// Server-side regex subscriptions: a regex subscription, resolved by the server, picks up a topic
// created after the member joined.
func Test848RegexNewTopic(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fast848()})
	g.createTopic("rx-a", 2)
	cl := g.client(kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.ConsumerGroup("rx-g"), kgo.ConsumeRegex(), kgo.ConsumeTopics("rx-.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond))
	produceTo(t, g, "rx-a", 2, 1)
	g.createTopic("rx-b", 2)
	produceTo(t, g, "rx-b", 2, 1)
	seen := map[string]bool{}
	deadline := time.Now().Add(testDeadline)
	for len(seen) < 2 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[r.Topic] = true })
		cancel()
	}
	if !seen["rx-a"] || !seen["rx-b"] {
		t.Fatalf("consumed from %v", seen)
	}
	described, err := g.admin().DescribeConsumerGroups(testCtx(t), "rx-g")
	if err != nil {
		t.Fatal(err)
	}
	m := described["rx-g"].Members
	if len(m) != 1 || m[0].SubscribedTopicRegex == nil || !regexp.MustCompile(*m[0].SubscribedTopicRegex).MatchString("rx-b") {
		t.Fatalf("described members %+v", m)
	}
}

// Consumer groups restored at restart: a static member that closes (epoch -2) and comes back with its
// instance id gets its partitions again; the other member never takes
// them meanwhile.
func Test848StaticMemberRejoin(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fast848()})
	const parts = 4
	topic, groupID := "static848", "static848-g"
	g.createTopic(topic, parts)
	a := member848(t, g.addr, groupID, topic, "uniform", kgo.InstanceID("inst-a"))
	b := member848(t, g.addr, groupID, topic, "uniform")
	eventually(t, "two members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	aOwned, bOwned := a.ownedSet(), b.ownedSet()
	a.close()
	// While a is away its partitions stay its: b is never given them.
	w := watchOwnership(t, b)
	stop := time.Now().Add(time.Second)
	for time.Now().Before(stop) {
		if n := len(b.ownedSet()); n != len(bOwned) {
			t.Fatalf("b took the static member's partitions: %v", b.ownedSet())
		}
		time.Sleep(10 * time.Millisecond) // sampling for a second, not waiting on a condition
	}
	a2 := member848(t, g.addr, groupID, topic, "uniform", kgo.InstanceID("inst-a"))
	w.add(a2)
	eventually(t, "the static member is back", func() bool { return ownedExactlyOnce(parts, a2, b) })
	if got := a2.ownedSet(); len(got) != len(aOwned) {
		t.Fatalf("rejoined static member owns %v, had %v", got, aOwned)
	}
	if got := b.ownedSet(); len(got) != len(bOwned) {
		t.Fatalf("the other member's partitions moved: %v, had %v", got, bOwned)
	}
}
