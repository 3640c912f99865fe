package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceValues produces n records to each partition with values
// "<prefix>-p<partition>-<i>" and returns them.
func produceValues(t *testing.T, g *gateway, topic string, parts int32, n int, prefix string) []string {
	t.Helper()
	cl := g.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	var rs []*kgo.Record
	var values []string
	for p := int32(0); p < parts; p++ {
		for i := range n {
			v := fmt.Sprintf("%s-p%d-%d", prefix, p, i)
			values = append(values, v)
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
		}
	}
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return values
}

// consumedOnce: every value was consumed by the members exactly once
// (none lost, none duplicated); it reports the first that was not.
func consumedOnce(values []string, ms ...*groupMember) (bool, string) {
	count := map[string]int{}
	for _, m := range ms {
		m.mu.Lock()
		for v, n := range m.seen {
			count[v] += n
		}
		m.mu.Unlock()
	}
	for _, v := range values {
		if count[v] != 1 {
			return false, fmt.Sprintf("%s consumed %d times", v, count[v])
		}
	}
	return true, ""
}

// committedToEnd: the group's committed offsets are the partitions' end
// offsets, so a change of owner starts where the last one stopped.
func committedToEnd(t *testing.T, g *gateway, groupID, topic string) bool {
	adm := g.admin()
	ends, err := adm.ListEndOffsets(testCtx(t), topic)
	if err != nil {
		return false
	}
	committed, err := adm.FetchOffsets(testCtx(t), groupID)
	if err != nil {
		return false
	}
	ok := true
	ends.Each(func(o kadm.ListedOffset) {
		c, found := committed.Lookup(topic, o.Partition)
		if !found || c.At != o.Offset {
			ok = false
		}
	})
	return ok
}

func groupType(t *testing.T, g *gateway, groupID string) string {
	listed, err := g.admin().ListGroups(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return listed[groupID].GroupType
}

// KIP-848's online migration with real clients: two classic franz-go
// consumers (cooperative-sticky) split a topic; a consumer-protocol
// member joins and the group becomes a consumer group with the classic
// members kept, the three splitting the partitions; when it leaves the
// group is classic again and the two split everything. No partition is
// ever owned by two members, and every record produced before, during
// and after is consumed exactly once.
func TestGroupMigrationClassicConsumerClassic(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fast848()})
	const topic, groupID, parts = "migrate", "gmigrate", int32(6)
	g.createTopic(topic, parts)
	commitFast := kgo.AutoCommitInterval(100 * time.Millisecond)
	classic := func() *groupMember {
		return newGroupMember(t, g.addr, groupID, topic, kgo.Balancers(kgo.CooperativeStickyBalancer()), commitFast)
	}
	var values []string
	drain := func(what string, ms ...*groupMember) {
		t.Helper()
		eventually(t, what+": every record consumed", func() bool { ok, _ := consumedOnce(values, ms...); return ok })
		eventually(t, what+": offsets committed", func() bool { return committedToEnd(t, g, groupID, topic) })
	}

	a, b := classic(), classic()
	w := watchOwnership(t, a, b)
	eventually(t, "two classic members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b) })
	if typ := groupType(t, g, groupID); typ != "classic" {
		t.Fatalf("group type %q before the upgrade", typ)
	}
	values = append(values, produceValues(t, g, topic, parts, 20, "classic")...)
	drain("classic", a, b)

	c := member848(t, g.addr, groupID, topic, "uniform", commitFast)
	w.add(c)
	eventually(t, "classic and consumer-protocol members split the partitions", func() bool { return ownedExactlyOnce(parts, a, b, c) })
	if typ := groupType(t, g, groupID); typ != "consumer" {
		t.Fatalf("group type %q after the upgrade", typ)
	}
	described, err := g.admin().DescribeConsumerGroups(testCtx(t), groupID)
	if err != nil || described[groupID].Err != nil || len(described[groupID].Members) != 3 {
		t.Fatalf("described after the upgrade: %v %+v", err, described[groupID])
	}
	values = append(values, produceValues(t, g, topic, parts, 20, "mixed")...)
	drain("mixed", a, b, c)

	c.close()
	eventually(t, "the classic members split the partitions again", func() bool { return ownedExactlyOnce(parts, a, b) })
	eventually(t, "the group is classic again", func() bool { return groupType(t, g, groupID) == "classic" })
	values = append(values, produceValues(t, g, topic, parts, 20, "downgraded")...)
	drain("downgraded", a, b, c)
	if ok, why := consumedOnce(values, a, b, c); !ok {
		t.Fatal(why)
	}
}
