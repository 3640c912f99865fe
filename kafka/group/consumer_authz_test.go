package group

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclTable is a Config.MayDescribe over a changeable principal -> topics
// table.
type aclTable struct {
	mu  sync.Mutex
	may map[string]map[string]bool
}

func (a *aclTable) check(principal, _ string, topic string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.may[principal][topic]
}

func (a *aclTable) set(principal string, topics ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[string]bool{}
	for _, t := range topics {
		m[t] = true
	}
	a.may[principal] = m
}

// beatAs is harness.beat sent by principal.
func (h *harness) beatAs(principal, group string, m *cm, join bool) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = group, m.id, m.epoch
	req.RebalanceTimeoutMillis = 60000
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if join {
		req.MemberEpoch = 0
		req.SubscribedTopicNames, req.SubscribedTopicRegex = m.topics, m.regex
	} else {
		for _, t := range sortedTopicsOf(m.owned) {
			rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
			rt.TopicID, rt.Partitions = t, m.owned[t]
			req.Topics = append(req.Topics, rt)
		}
	}
	resp := h.c.ConsumerGroupHeartbeat(Client{ID: "c", Host: "/127.0.0.1", Principal: principal, PeerHost: "127.0.0.1"}, req)
	m.took(resp)
	return resp
}

// Server-side regex subscriptions with authorization: a regex subscription is resolved per member
// against its own principal's DESCRIBE. Two members of different
// principals share one regex (".*") in one group: each is assigned only
// topics it may describe, whichever member's heartbeat resolved the
// group, and a revoked DESCRIBE takes the topic away at the next
// metadata refresh.
func TestConsumerRegexOnlyDescribableTopics(t *testing.T) {
	topics := &staticTopics{}
	acls := &aclTable{may: map[string]map[string]bool{}}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics, MayDescribe: acls.check}}
	h.open()
	pub, secret := topics.add("public", 2), topics.add("secret", 2)
	topics.add("__consumer_offsets", 1)
	acls.set("User:alice", "public", "secret")
	acls.set("User:mallory", "public")

	all := ".*"
	alice, mallory := &cm{id: "alice", regex: &all}, &cm{id: "mallory", regex: &all}
	code(t, "alice joins", h.beatAs("User:alice", "g", alice, true).ErrorCode, nil)
	code(t, "mallory joins", h.beatAs("User:mallory", "g", mallory, true).ErrorCode, nil)
	ms := []*cm{alice, mallory}
	for range 10 { // converge; revocations are acknowledged at once
		h.beatAs("User:alice", "g", alice, false)
		h.beatAs("User:mallory", "g", mallory, false)
	}
	noDoubleOwnership(t, ms)
	if _, ok := mallory.owned[secret]; ok {
		t.Fatalf("mallory is assigned a topic it may not describe: %v", mallory.owned)
	}
	for id := range mallory.owned {
		if id != pub {
			t.Fatalf("mallory is assigned %q, only public is describable", id)
		}
	}
	if len(alice.owned[secret]) != 2 {
		t.Fatalf("alice owns %v, want both partitions of secret", alice.owned)
	}
	if got := ownedCount(ms); got != 4 {
		t.Fatalf("%d partitions owned, want public's and secret's 4", got)
	}

	// DESCRIBE on secret revoked from alice: gone at the next refresh,
	// whoever heartbeats.
	acls.set("User:alice", "public")
	h.clock.Advance(2 * metadataRefresh)
	for range 10 {
		h.beatAs("User:mallory", "g", mallory, false)
		h.beatAs("User:alice", "g", alice, false)
	}
	for _, m := range ms {
		if _, ok := m.owned[secret]; ok {
			t.Fatalf("%s still owns secret after losing DESCRIBE: %v", m.id, m.owned)
		}
	}
	if got := ownedCount(ms); got != 2 {
		t.Fatalf("%d partitions owned, want public's 2", got)
	}
}
