package group

import (
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticTopics is a TopicLister over a fixed, changeable topic set.
type staticTopics struct {
	mu     sync.Mutex
	topics []TopicInfo
}

func (s *staticTopics) Topics() []TopicInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.topics)
}

func (s *staticTopics) add(name string, parts int32) topicID {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := tid(name)
	s.topics = append(s.topics, TopicInfo{Name: name, ID: id, Partitions: parts})
	return id
}

func new848Harness(t *testing.T) (*harness, *staticTopics) {
	t.Helper()
	topics := &staticTopics{}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir()}
	h.cfg = Config{Metadata: topics}
	h.open()
	return h, topics
}

// cm is a simulated consumer-protocol member: it owns what the server
// last sent it and reports that on every heartbeat (acknowledging
// revocations at once unless holding).
type cm struct {
	id     string
	epoch  int32
	owned  assignment
	topics []string
	regex  *string
	inst   *string
}

// took records an answer as the member's client does: its epoch, and
// what it owns when the answer carries an assignment (none: unchanged).
func (m *cm) took(resp *kmsg.ConsumerGroupHeartbeatResponse) {
	if resp.ErrorCode != 0 {
		return
	}
	m.epoch = resp.MemberEpoch
	if resp.Assignment == nil {
		return
	}
	m.owned = make(assignment)
	for _, t := range resp.Assignment.Topics {
		m.owned[t.TopicID] = t.Partitions
	}
}

func (h *harness) beat(group string, m *cm, join bool) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = group, m.id, m.epoch, m.inst
	req.RebalanceTimeoutMillis = 60000
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if join {
		req.MemberEpoch = 0
		req.SubscribedTopicNames, req.SubscribedTopicRegex = m.topics, m.regex
		if req.SubscribedTopicNames == nil && m.regex == nil {
			req.SubscribedTopicNames = []string{}
		}
	} else {
		for _, t := range sortedTopicsOf(m.owned) {
			rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
			rt.TopicID, rt.Partitions = t, m.owned[t]
			req.Topics = append(req.Topics, rt)
		}
	}
	resp := h.c.ConsumerGroupHeartbeat(Client{ID: "c", Host: "/127.0.0.1"}, req)
	m.took(resp)
	return resp
}

// noDoubleOwnership checks the members' own views: no partition is owned
// by two simulated clients at once.
func noDoubleOwnership(t *testing.T, ms []*cm) {
	t.Helper()
	seen := map[tp]string{}
	for _, m := range ms {
		for _, x := range m.owned.tps() {
			if o, ok := seen[x]; ok {
				t.Fatalf("partition %v owned by %s and %s", x, o, m.id)
			}
			seen[x] = m.id
		}
	}
}

func ownedCount(ms []*cm) int {
	n := 0
	for _, m := range ms {
		n += m.owned.count()
	}
	return n
}

// Revocation before reassignment: members join and leave in random order, heartbeating in random
// order; at no point do two members own one partition, and once everyone
// has heartbeated enough every partition is owned and the split is even.
func TestConsumerReconcileNeverDoubleOwns(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		h, topics := new848Harness(t)
		h.c.cfg.ConsumerReleaseWait = -1 // one heartbeat at a time: a wait for releases could only delay
		topics.add("t", 12)
		rng := rand.New(rand.NewSource(seed))
		var ms []*cm
		for step := 0; step < 200; step++ {
			switch r := rng.Intn(10); {
			case r == 0 && len(ms) < 6:
				m := &cm{id: fmt.Sprintf("m%d", step), topics: []string{"t"}}
				if resp := h.beat("g", m, true); resp.ErrorCode != 0 {
					t.Fatalf("join: %v", kerr.ErrorForCode(resp.ErrorCode))
				}
				ms = append(ms, m)
			case r == 1 && len(ms) > 1:
				i := rng.Intn(len(ms))
				m := ms[i]
				m.epoch = epochLeave
				h.beat("g", m, false)
				ms = slices.Delete(ms, i, i+1)
			default:
				if len(ms) == 0 {
					continue
				}
				m := ms[rng.Intn(len(ms))]
				if resp := h.beat("g", m, false); resp.ErrorCode != 0 {
					t.Fatalf("seed %d: heartbeat of %s at %d: %v", seed, m.id, m.epoch, kerr.ErrorForCode(resp.ErrorCode))
				}
			}
			noDoubleOwnership(t, ms)
		}
		for range 4 {
			for _, m := range ms {
				h.beat("g", m, false)
				noDoubleOwnership(t, ms)
			}
		}
		if n := ownedCount(ms); n != 12 {
			t.Fatalf("seed %d: %d of 12 partitions owned after settling", seed, n)
		}
		for _, m := range ms {
			if c := m.owned.count(); c < 12/len(ms) || c > (12+len(ms)-1)/len(ms) {
				t.Fatalf("seed %d: uneven: %s owns %d of 12 among %d", seed, m.id, c, len(ms))
			}
		}
		h.close()
	}
}

// Revocation before reassignment: a member that keeps reporting a revoked partition keeps it, and
// the member it is meant for does not get it until the revocation is
// acknowledged.
func TestConsumerRevokeBeforeAssign(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 2)
	a := &cm{id: "a", topics: []string{"t"}}
	h.beat("g", a, true)
	if a.owned.count() != 2 {
		t.Fatalf("a owns %v", a.owned)
	}
	b := &cm{id: "b", topics: []string{"t"}}
	h.beat("g", b, true)
	if b.owned.count() != 0 {
		t.Fatalf("b got %v while a still owns everything", b.owned)
	}
	held := a.owned.clone()
	h.beat("g", a, false) // a is told to revoke one partition
	if a.owned.count() != 1 {
		t.Fatalf("a was not asked to revoke: %v", a.owned)
	}
	// a has not let go yet: it reports both partitions.
	stillOwned := a.owned
	a.owned = held
	h.beat("g", a, false)
	h.beat("g", b, false)
	if b.owned.count() != 0 {
		t.Fatalf("b got %v before a revoked", b.owned)
	}
	a.owned = stillOwned
	h.beat("g", a, false)
	h.beat("g", b, false)
	if b.owned.count() != 1 || a.owned.count() != 1 {
		t.Fatalf("after revocation a %v b %v", a.owned, b.owned)
	}
}

// Revocation before reassignment: a heartbeat with a wrong epoch is FENCED_MEMBER_EPOCH, an unknown
// member UNKNOWN_MEMBER_ID; validation errors as Kafka's.
func TestConsumerHeartbeatErrors(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 2)
	a := &cm{id: "a", topics: []string{"t"}}
	h.beat("g", a, true)
	bad := &cm{id: "a", epoch: a.epoch + 5, owned: assignment{}}
	code(t, "future epoch", h.beat("g", bad, false).ErrorCode, kerr.FencedMemberEpoch)
	unknown := &cm{id: "zz", epoch: 3, owned: assignment{}}
	code(t, "unknown member", h.beat("g", unknown, false).ErrorCode, kerr.UnknownMemberID)
	missing := &cm{id: "x", epoch: 3, owned: assignment{}}
	code(t, "unknown group", h.beat("nope", missing, false).ErrorCode, kerr.GroupIDNotFound)

	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.RebalanceTimeoutMillis = 1, "g", "n", 1000
	req.SubscribedTopicNames, req.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	assignor := "sticky"
	req.ServerAssignor = &assignor
	code(t, "unknown assignor", h.c.ConsumerGroupHeartbeat(Client{}, req).ErrorCode, kerr.UnsupportedAssignor)
	req.ServerAssignor = nil
	re := "("
	req.SubscribedTopicRegex = &re
	code(t, "bad regex", h.c.ConsumerGroupHeartbeat(Client{}, req).ErrorCode, kerr.InvalidRegularExpression)
	long := string(make([]byte, maxRegexLen+1))
	req.SubscribedTopicRegex = &long
	code(t, "long regex", h.c.ConsumerGroupHeartbeat(Client{}, req).ErrorCode, kerr.InvalidRegularExpression)
	req.SubscribedTopicRegex, req.Topics = nil, nil
	code(t, "join with owned partitions nil", h.c.ConsumerGroupHeartbeat(Client{}, req).ErrorCode, kerr.InvalidRequest)
	req.Topics, req.MemberID = []kmsg.ConsumerGroupHeartbeatRequestTopic{}, ""
	code(t, "v1 without member id", h.c.ConsumerGroupHeartbeat(Client{}, req).ErrorCode, kerr.InvalidRequest)
	req.MemberID, req.MemberEpoch = "n", -2
	code(t, "static leave without instance", h.c.ConsumerGroupHeartbeat(Client{}, req).ErrorCode, kerr.InvalidRequest)
}

// Only an answer that keeps the member in the group carries the
// heartbeat interval; errors and leaves carry 0, as Apache Kafka 4.4's
// coordinator answers (test/kafkadiff).
func TestConsumerHeartbeatIntervalOnlyWhileMember(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 1)
	a := &cm{id: "a", topics: []string{"t"}}
	want := int32(h.c.cfg.ConsumerHeartbeatInterval.Milliseconds())
	if got := h.beat("g", a, true).HeartbeatIntervalMillis; got != want || want == 0 {
		t.Errorf("join: interval %d, want %d", got, want)
	}
	if got := h.beat("g", a, false).HeartbeatIntervalMillis; got != want {
		t.Errorf("heartbeat: interval %d, want %d", got, want)
	}
	bad := &cm{id: "a", epoch: a.epoch + 5, owned: assignment{}}
	if resp := h.beat("g", bad, false); resp.ErrorCode == 0 || resp.HeartbeatIntervalMillis != 0 {
		t.Errorf("fenced: error %d interval %d, want an error and 0", resp.ErrorCode, resp.HeartbeatIntervalMillis)
	}
	a.epoch = -1
	if resp := h.beat("g", a, false); resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 0 {
		t.Errorf("leave: error %d interval %d, want 0 and 0", resp.ErrorCode, resp.HeartbeatIntervalMillis)
	}
}

// The group size bound: a consumer group holds at most group.max.size members.
func TestConsumerGroupMaxSize(t *testing.T) {
	topics := &staticTopics{}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics, MaxGroupSize: 2}}
	h.open()
	for i := range 2 {
		m := &cm{id: fmt.Sprint(i), topics: []string{"t"}}
		code(t, "join", h.beat("g", m, true).ErrorCode, nil)
	}
	code(t, "third", h.beat("g", &cm{id: "x", topics: []string{"t"}}, true).ErrorCode, kerr.GroupMaxSizeReached)
}

// One group type per id: a classic group with members is not a consumer group; an empty
// consumer group becomes classic on JoinGroup and back.
func TestConsumerClassicCoexistence(t *testing.T) {
	h, topics := new848Harness(t)
	h.cfg.ConsumerMigrationPolicy = MigrationDisabled // no online migration (migrate_test.go)
	h.restart()
	topics.add("t", 2)
	h.join("classic", "range")
	code(t, "heartbeat into classic", h.beat("classic", &cm{id: "a", topics: []string{"t"}}, true).ErrorCode, kerr.GroupIDNotFound)

	a := &cm{id: "a", topics: []string{"t"}}
	h.beat("cg", a, true)
	j := newJoin("cg", "", "range")
	j.ProtocolType = "connect"
	resp := h.await(h.joinAsync(j))
	code(t, "classic join of another protocol type into consumer group", resp.ErrorCode, kerr.InconsistentGroupProtocol)
	// A consumer-protocol-type JoinGroup is served by the consumer group
	// whatever the migration policy, as Kafka's classicGroupJoin.
	resp = h.await(h.joinAsync(newJoin("cg", "", "range")))
	code(t, "classic join into consumer group", resp.ErrorCode, kerr.MemberIDRequired)
	if d := h.describe("cg"); d.State != "Dead" {
		t.Fatalf("DescribeGroups of a consumer group: %s", d.State)
	}
	a.epoch = epochLeave
	h.beat("cg", a, false)
	h.join("cg", "range") // empty consumer group: becomes classic
	if d := h.describe("cg"); d.State == "Dead" || d.ProtocolType != "consumer" {
		t.Fatalf("after conversion: %+v", d)
	}
	dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dreq.Groups = []string{"cg"}
	code(t, "describe classic", h.c.ConsumerGroupDescribe(dreq).Groups[0].ErrorCode, kerr.GroupIDNotFound)
	h.restart()
	code(t, "describe classic after restart", h.c.ConsumerGroupDescribe(dreq).Groups[0].ErrorCode, kerr.GroupIDNotFound)
}

// Server-side regex subscriptions: a group resolves at most maxGroupRegexes distinct regexes; a
// member with one more is refused, one reusing a known regex is not.
func TestConsumerRegexBound(t *testing.T) {
	topics := &staticTopics{}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics, MaxGroupSize: 2 * maxGroupRegexes}}
	h.open()
	for i := range maxGroupRegexes {
		re := fmt.Sprintf("t%d.*", i)
		code(t, "join", h.beat("g", &cm{id: fmt.Sprint(i), regex: &re}, true).ErrorCode, nil)
	}
	re := "one-more"
	code(t, "one regex more", h.beat("g", &cm{id: "x", regex: &re}, true).ErrorCode, kerr.InvalidRegularExpression)
	known := "t0.*"
	code(t, "a known regex", h.beat("g", &cm{id: "y", regex: &known}, true).ErrorCode, nil)
}

// One group type per id, persisted empty groups: ListGroups v5 reports the type and the consumer state and
// filters by type; DeleteGroups refuses a consumer group with members and
// deletes an empty one; retention spares a consumer group with members.
func TestConsumerListDeleteExpire(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 1)
	a := &cm{id: "a", topics: []string{"t"}}
	h.beat("cg", a, true)
	h.join("classic", "range")
	list := func(types ...string) map[string]kmsg.ListGroupsResponseGroup {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version, req.TypesFilter = 5, types
		out := map[string]kmsg.ListGroupsResponseGroup{}
		for _, g := range h.c.ListGroups(req).Groups {
			out[g.Group] = g
		}
		return out
	}
	all := list()
	if g := all["cg"]; g.GroupType != "consumer" || g.GroupState != "Stable" || g.ProtocolType != "consumer" {
		t.Fatalf("consumer group listed as %+v", g)
	}
	if g := all["classic"]; g.GroupType != "classic" {
		t.Fatalf("classic group listed as %+v", g)
	}
	if only := list("Consumer"); len(only) != 1 || only["cg"].Group != "cg" {
		t.Fatalf("types filter consumer: %v", only)
	}
	del := func() int16 {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"cg"}
		return h.c.DeleteGroups(req).Groups[0].ErrorCode
	}
	for range 25 * 120 { // past the retention (24h), a heartbeating every 30s
		h.clock.Advance(30 * time.Second)
		code(t, "heartbeat", h.beat("cg", a, false).ErrorCode, nil)
	}
	h.c.ExpireOffsets()
	code(t, "delete with a member", del(), kerr.NonEmptyGroup)
	a.epoch = epochLeave
	h.beat("cg", a, false)
	if g := list()["cg"]; g.GroupState != "Empty" {
		t.Fatalf("after the leave: %+v", g)
	}
	code(t, "delete empty", del(), nil)
	if _, ok := list()["cg"]; ok {
		t.Fatal("deleted group still listed")
	}
	h.restart()
	if _, ok := list()["cg"]; ok {
		t.Fatal("deleted group back after restart")
	}
}

func (s *staticTopics) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.topics = slices.DeleteFunc(s.topics, func(t TopicInfo) bool { return t.Name == name })
}

// Revocation before reassignment: a member that keeps a revoked partition past its rebalance timeout
// is removed, and the partition goes to the member it was meant for.
func TestConsumerRevocationTimeout(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 2)
	a, b := &cm{id: "a", topics: []string{"t"}}, &cm{id: "b", topics: []string{"t"}}
	h.beat("g", a, true)
	h.beat("g", b, true)
	held := a.owned.clone()
	h.beat("g", a, false) // told to revoke one
	a.owned = held        // but keeps reporting both
	for range 3 {         // 90s: past the 60s rebalance timeout, within sessions
		h.clock.Advance(30 * time.Second)
		h.beat("g", a, false)
		a.owned = held
		h.beat("g", b, false)
	}
	code(t, "a after the revocation timeout", h.beat("g", a, false).ErrorCode, kerr.UnknownMemberID)
	settle(h, "g", b)
	if b.owned.count() != 2 {
		t.Fatalf("b owns %v", b.owned)
	}
}

// Server-side regex subscriptions: a deleted topic leaves the subscription at the next refresh and
// its partitions are revoked.
func TestConsumerTopicDeleted(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("x", 2)
	topics.add("y", 2)
	a := &cm{id: "a", topics: []string{"x", "y"}}
	h.beat("g", a, true)
	settle(h, "g", a)
	topics.remove("y")
	h.clock.Advance(2 * metadataRefresh)
	settle(h, "g", a)
	if a.owned.count() != 2 || len(a.owned[tid("x")]) != 2 {
		t.Fatalf("after deleting y a owns %v", a.owned)
	}
}

// One group type per id: only a join turns an empty classic group into a consumer group;
// another heartbeat to it is GROUP_ID_NOT_FOUND, as Kafka.
func TestConsumerHeartbeatToEmptyClassicGroup(t *testing.T) {
	h, _ := new848Harness(t)
	req := kmsg.NewPtrOffsetCommitRequest() // a simple consumer's commit creates an empty classic group
	req.Group, req.Generation = "simple", -1
	h.c.OffsetCommit(req)
	code(t, "heartbeat", h.beat("simple", &cm{id: "a", epoch: 3, owned: assignment{}}, false).ErrorCode, kerr.GroupIDNotFound)
	code(t, "join", h.beat("simple", &cm{id: "a", topics: []string{"t"}}, true).ErrorCode, nil)
}

// DescribeGroups v6 (KIP-1043): an unknown group and a consumer-protocol
// group are GROUP_ID_NOT_FOUND with Kafka's messages, which
// kafka-consumer-groups prints, and state Dead, as Kafka 4.4 answers; v5 still describes both as Dead, and a
// classic group is described as before.
func TestDescribeGroupsV6NotFound(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 1)
	h.join("classic", "range")
	h.beat("cg", &cm{id: "a", topics: []string{"t"}}, true)
	describe := func(version int16, group string) kmsg.DescribeGroupsResponseGroup {
		r := kmsg.NewPtrDescribeGroupsRequest()
		r.Version, r.Groups = version, []string{group}
		return h.c.DescribeGroups(r).Groups[0]
	}
	for group, msg := range map[string]string{"nope": "Group nope not found.", "cg": "Group cg is not a classic group."} {
		d := describe(6, group)
		code(t, "v6 describe "+group, d.ErrorCode, kerr.GroupIDNotFound)
		if d.ErrorMessage == nil || *d.ErrorMessage != msg || d.State != "Dead" || len(d.Members) != 0 {
			t.Fatalf("v6 describe %s: %+v (message %v), want message %q", group, d, d.ErrorMessage, msg)
		}
		if d := describe(5, group); d.ErrorCode != 0 || d.State != "Dead" {
			t.Fatalf("v5 describe %s: %+v", group, d)
		}
	}
	if d := describe(6, "classic"); d.ErrorCode != 0 || d.State == "Dead" || len(d.Members) != 1 {
		t.Fatalf("v6 describe of a classic group: %+v", d)
	}
	// ConsumerGroupDescribe words its GROUP_ID_NOT_FOUND as Kafka does.
	for group, msg := range map[string]string{"nope": "Group nope not found.", "classic": "Group classic is not a consumer group."} {
		r := kmsg.NewPtrConsumerGroupDescribeRequest()
		r.Groups = []string{group}
		d := h.c.ConsumerGroupDescribe(r).Groups[0]
		code(t, "consumer describe "+group, d.ErrorCode, kerr.GroupIDNotFound)
		if d.ErrorMessage == nil || *d.ErrorMessage != msg {
			t.Fatalf("consumer describe %s: message %v, want %q", group, d.ErrorMessage, msg)
		}
	}
}

// ConsumerGroupDescribe names a member's regex, and "" (not null) for a
// member subscribed by names, as Kafka 4.4 answers (test/kafkadiff's
// group-consumer-848).
func TestConsumerDescribeRegexNeverNull(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 1)
	re := "t.*"
	byName, byRegex := &cm{id: "a", topics: []string{"t"}}, &cm{id: "b", regex: &re}
	h.beat("g", byName, true)
	h.beat("g", byRegex, true)
	dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dreq.Groups = []string{"g"}
	dg := h.c.ConsumerGroupDescribe(dreq).Groups[0]
	got := map[string]*string{}
	for _, m := range dg.Members {
		got[m.MemberID] = m.SubscribedTopicRegex
	}
	if len(got) != 2 || got["a"] == nil || *got["a"] != "" || got["b"] == nil || *got["b"] != re {
		t.Fatalf("described %d members, regexes a=%v b=%v; want \"\" and %q", len(dg.Members), got["a"], got["b"], re)
	}
}
