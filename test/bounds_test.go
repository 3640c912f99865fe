package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Per-principal bounds (docs/DESIGN.md "Bounds"): User:mallory grows
// transactional ids, share sessions and fetch sessions as far as the
// server lets her, which is her own share of each, below the global
// bound; User:alice's transactional producer, share consumer and fetch
// session then still work. Before the per-principal bounds, mallory took
// every transactional id and share and fetch session the server had.
func TestPerPrincipalBoundsIsolate(t *testing.T) {
	const (
		txnIDs, txnIDsPer             = 12, 4
		shareSessions, sharePer, conn = 6, 3, 2
		fetchSlots, fetchPer          = 6, 2
		groupsPer                     = 3
	)
	a := &aclServer{t: t, dir: t.TempDir()}
	for _, u := range []string{"admin", "alice", "mallory"} {
		addUser(t, a.dir, u, u+"-pw")
	}
	kc := saslConfig()
	kc.Txn = txn.Config{MaxTransactionalIDs: txnIDs, MaxTransactionalIDsPerPrincipal: txnIDsPer}
	kc.Share = share.Config{MaxShareSessions: shareSessions, MaxShareSessionsPerPrincipal: sharePer, MaxShareSessionsPerConnection: conn}
	kc.FetchSessionCacheSlots, kc.FetchSessionCacheSlotsPerPrincipal = fetchSlots, fetchPer
	kc.GroupsPerPrincipal = groupsPer
	a.srv = startServer(t, server.Config{DataDir: a.dir, Kafka: kc,
		Listeners:  []kafka.Listener{{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"}},
		Resolver:   resolver.Config{NumPartitions: 1, AutoCreate: true},
		Authorizer: server.AuthorizerConfig{ClassName: standardAuthorizer, SuperUsers: []string{"User:admin"}}})
	t.Cleanup(func() { a.srv.Close() })
	a.createTopics("tenants")
	a.grant(kadm.NewACLs().Allow("User:alice", "User:mallory").
		Topics("*").Groups("*").TransactionalIDs("*").Operations(kadm.OpAll))
	topicID := aclTopicID(t, a, "tenants")
	mallory := a.client("mallory")

	// Transactional ids: mallory gets her share, then POLICY_VIOLATION.
	granted := 0
	for i := range txnIDs {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(fmt.Sprintf("mallory-%d", i)), 60000
		switch c := request[*kmsg.InitProducerIDResponse](t, mallory, req).ErrorCode; c {
		case 0:
			granted++
		case kerr.PolicyViolation.Code:
		default:
			t.Fatalf("mallory's InitProducerId %d: %v", i, kerr.ErrorForCode(c))
		}
	}
	if granted != txnIDsPer {
		t.Errorf("mallory got %d of %d transactional ids; her bound is %d", granted, txnIDs, txnIDsPer)
	}

	// Fetch sessions: at most her share get an id.
	sessions := 0
	for range fetchSlots {
		if id := fetchSession(t, mallory, topicID, 0, 0); id != 0 {
			sessions++
		}
	}
	if sessions != fetchPer {
		t.Errorf("mallory got %d fetch sessions of %d slots; her bound is %d", sessions, fetchSlots, fetchPer)
	}

	// Share sessions: two per connection, three in all, then
	// SHARE_SESSION_LIMIT_REACHED. Three connections could take all six.
	opened := 0
	for c := range shareSessions / conn {
		cl := mallory
		if c > 0 {
			cl = a.client("mallory")
		}
		for i := range shareSessions {
			m := &rawMember{t: t, cl: cl, group: "mallory-share", id: fmt.Sprintf("mallory-%d-%020d", c, i), topic: topicID}
			m.heartbeat("tenants")
			switch code := m.open(); code {
			case 0:
				opened++
			case kerr.ShareSessionLimitReached.Code:
			default:
				t.Fatalf("mallory's share session: %v", kerr.ErrorForCode(code))
			}
		}
	}
	if opened != sharePer {
		t.Errorf("mallory opened %d share sessions; her bound is %d", opened, sharePer)
	}

	// Groups: her share group is one; two more, then POLICY_VIOLATION.
	created := 1
	for i := range 5 {
		switch code := commitOffset(t, mallory, fmt.Sprintf("mallory-group-%d", i)); code {
		case 0:
			created++
		case kerr.PolicyViolation.Code:
		default:
			t.Fatalf("mallory's offset commit: %v", kerr.ErrorForCode(code))
		}
	}
	if created != groupsPer {
		t.Errorf("mallory created %d groups; her bound is %d", created, groupsPer)
	}

	// Alice: a transactional producer commits.
	producer := a.client("alice", kgo.TransactionalID("alice-tx"), kgo.DefaultProduceTopic("tenants"))
	if err := producer.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := producer.ProduceSync(testCtx(t), &kgo.Record{Value: []byte("alice")}).FirstErr(); err != nil {
		t.Fatalf("alice's transactional produce: %v", err)
	}
	if err := producer.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatalf("alice's commit: %v", err)
	}
	// A group of her own.
	if code := commitOffset(t, a.client("alice"), "alice-group"); code != 0 {
		t.Fatalf("alice's offset commit: %v", kerr.ErrorForCode(code))
	}
	// A fetch session, used incrementally.
	alice := a.client("alice")
	id := fetchSession(t, alice, topicID, 0, 0)
	if id == 0 {
		t.Fatal("alice got no fetch session")
	}
	if again := fetchSession(t, alice, topicID, id, 1); again != id {
		t.Fatalf("alice's incremental fetch answered session %d, want %d", again, id)
	}
	// A share consumer acquires a record.
	m := &rawMember{t: t, cl: a.client("alice"), group: "alice-share", id: "alice-member-00000000001", topic: topicID}
	m.heartbeat("tenants")
	if code := m.open(); code != 0 {
		t.Fatalf("alice's share session: %v", kerr.ErrorForCode(code))
	}
	if err := alice.ProduceSync(testCtx(t), &kgo.Record{Topic: "tenants", Value: []byte("for alice")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if got := m.fetch(5 * time.Second); len(got) == 0 {
		t.Fatal("alice's share consumer acquired nothing")
	}
}

// fetchSession sends a Fetch of partition 0 of the topic in session id at
// epoch (0, 0: a new session) and returns the session id answered.
func fetchSession(t *testing.T, cl *kgo.Client, topicID [16]byte, id, epoch int32) int32 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionID, req.SessionEpoch = -1, 1<<20, id, epoch
	if epoch == 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.TopicID = topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
		req.Topics = []kmsg.FetchRequestTopic{rt}
	}
	resp := seedRequest[*kmsg.FetchResponse](t, cl, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("fetch in session %d at epoch %d: %v", id, epoch, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.SessionID
}

// heartbeat joins the member to its share group, subscribed to topic.
func (m *rawMember) heartbeat(topic string) {
	m.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = m.group, m.id, []string{topic}
	resp := seedRequest[*kmsg.ShareGroupHeartbeatResponse](m.t, m.cl, req)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("join %s: %v", m.id, err)
	}
	m.epoch = resp.MemberEpoch
}

// open opens the member's share session over partition 0 and returns the
// answer's error code.
func (m *rawMember) open() int16 {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.MaxRecords = &m.group, &m.id, 1
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.topic
	rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
	req.Topics = []kmsg.ShareFetchRequestTopic{rt}
	resp := seedRequest[*kmsg.ShareFetchResponse](m.t, m.cl, req)
	if resp.ErrorCode == 0 {
		m.sepoch = 1
	}
	return resp.ErrorCode
}

// commitOffset commits offset 0 of partition 0 of "tenants" for group as
// a simple consumer (no member) and returns the partition's error code.
func commitOffset(t *testing.T, cl *kgo.Client, group string) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "tenants"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return request[*kmsg.OffsetCommitResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
}
