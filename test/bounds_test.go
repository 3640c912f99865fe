package test

import (
	"errors"
	"fmt"
	"strings"
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

// tenantServer is an aclServer started with kc, users admin (a super
// user), alice and mallory, alice and mallory allowed everything on
// topics, groups and transactional ids; restart reopens the same data
// directory with the same configuration.
type tenantServer struct {
	*aclServer
	kc kafka.Config
}

func newTenantServer(t *testing.T, kc kafka.Config) *tenantServer {
	t.Helper()
	ts := &tenantServer{aclServer: &aclServer{t: t, dir: t.TempDir()}, kc: kc}
	for _, u := range []string{"admin", "alice", "mallory"} {
		addUser(t, ts.dir, u, u+"-pw")
	}
	ts.start()
	ts.grant(kadm.NewACLs().Allow("User:alice", "User:mallory").
		Topics("*").Groups("*").TransactionalIDs("*").Operations(kadm.OpAll))
	return ts
}

func (ts *tenantServer) start() {
	ts.t.Helper()
	ts.srv = startServer(ts.t, server.Config{DataDir: ts.dir, Kafka: ts.kc,
		Listeners:  []kafka.Listener{{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"}},
		Resolver:   resolver.Config{NumPartitions: 1, AutoCreate: true},
		Authorizer: server.AuthorizerConfig{ClassName: standardAuthorizer, SuperUsers: []string{"User:admin"}}})
	srv := ts.srv
	ts.t.Cleanup(func() { srv.Close() })
}

func (ts *tenantServer) restart() {
	ts.t.Helper()
	if err := ts.srv.Close(); err != nil {
		ts.t.Fatal(err)
	}
	ts.start()
}

// createTopic creates topic with partitions as user and returns the
// topic's error and message.
func (ts *tenantServer) createTopic(user, topic string, partitions int32) (error, string) {
	ts.t.Helper()
	rs, err := kadm.NewClient(ts.client(user)).CreateTopics(testCtx(ts.t), partitions, 1, nil, topic)
	if err != nil {
		ts.t.Fatalf("%s creates %s: %v", user, topic, err)
	}
	return rs[topic].Err, rs[topic].ErrMessage
}

// Per-principal partitions (partitions.max.per.principal): the catalog
// records who created each topic, and a principal's topics hold at most
// its bound of partitions, below the global one. Mallory fills her
// bound; CreateTopics, CreatePartitions (whoever asks: the partitions
// are her topic's) and auto-creation then answer POLICY_VIOLATION with
// the reason, as Kafka does for a create topic policy's refusal; alice
// still creates hers; the creator survives a restart; deleting a topic
// gives its partitions back. Before creators were recorded, mallory
// could create partitions until the global partitions.max.
func TestPerPrincipalPartitionBound(t *testing.T) {
	const per = 5
	kc := saslConfig()
	kc.MaxPartitions, kc.MaxPartitionsPerPrincipal = 4*per, per
	ts := newTenantServer(t, kc)

	wantRefused := func(what string, err error, msg string) {
		t.Helper()
		if !errors.Is(err, kerr.PolicyViolation) || !strings.Contains(msg, "partitions.max.per.principal") {
			t.Fatalf("%s: %v (%q), want POLICY_VIOLATION naming partitions.max.per.principal", what, err, msg)
		}
	}
	if err, msg := ts.createTopic("mallory", "m-a", 3); err != nil {
		t.Fatalf("mallory's first topic: %v (%s)", err, msg)
	}
	err, msg := ts.createTopic("mallory", "m-b", 3)
	wantRefused("mallory's 3 more partitions beyond 5", err, msg)
	if err, msg := ts.createTopic("mallory", "m-b", 2); err != nil {
		t.Fatalf("mallory's second topic, up to her bound: %v (%s)", err, msg)
	}
	for _, user := range []string{"mallory", "admin"} {
		rs, err := kadm.NewClient(ts.client(user)).CreatePartitions(testCtx(t), 1, "m-a")
		if err != nil {
			t.Fatal(err)
		}
		wantRefused(user+" adds a partition to mallory's topic", rs["m-a"].Err, rs["m-a"].ErrMessage)
	}
	// Auto-creation through Metadata counts too.
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("m-auto")
	req.Topics = append(req.Topics, rt)
	if c := request[*kmsg.MetadataResponse](t, ts.client("mallory"), req).Topics[0].ErrorCode; c != kerr.PolicyViolation.Code {
		t.Fatalf("mallory's auto-created topic: %v, want POLICY_VIOLATION", kerr.ErrorForCode(c))
	}
	if err, msg := ts.createTopic("alice", "a-a", per); err != nil {
		t.Fatalf("alice's topic beside mallory at her bound: %v (%s)", err, msg)
	}

	ts.restart()
	err, msg = ts.createTopic("mallory", "m-c", 1)
	wantRefused("mallory after a restart", err, msg)
	if _, err := kadm.NewClient(ts.client("mallory")).DeleteTopic(testCtx(t), "m-b"); err != nil {
		t.Fatal(err)
	}
	if err, msg := ts.createTopic("mallory", "m-c", 2); err != nil {
		t.Fatalf("mallory's topic after deleting one: %v (%s)", err, msg)
	}
}

// Ownership of transactional ids and groups survives a restart (it is in
// the offsets store): mallory at her bound of each stays at it, and
// alice initializing mallory's id (she too may WRITE it) does not make it
// hers. Before, ownership was in memory: after a restart mallory had
// every bound afresh, and the next InitProducerId adopted the id.
func TestPerPrincipalOwnershipSurvivesRestart(t *testing.T) {
	const per = 2
	kc := saslConfig()
	kc.Txn = txn.Config{MaxTransactionalIDs: 10 * per, MaxTransactionalIDsPerPrincipal: per}
	kc.GroupsPerPrincipal = per
	ts := newTenantServer(t, kc)
	ts.createTopics("tenants")
	init := func(user, id string) int16 {
		t.Helper()
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
		return request[*kmsg.InitProducerIDResponse](t, ts.client(user), req).ErrorCode
	}
	want := func(what string, got int16, want error) {
		t.Helper()
		if err := kerr.ErrorForCode(got); err != want {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}
	for i := range per {
		want("mallory's id", init("mallory", fmt.Sprintf("m-%d", i)), nil)
		want("mallory's group", commitOffset(t, ts.client("mallory"), fmt.Sprintf("mg-%d", i)), nil)
	}
	want("mallory's id beyond her bound", init("mallory", "m-x"), kerr.PolicyViolation)

	ts.restart()
	want("mallory's new id after a restart", init("mallory", "m-x"), kerr.PolicyViolation)
	want("mallory's new group after a restart", commitOffset(t, ts.client("mallory"), "mg-x"), kerr.PolicyViolation)
	want("mallory's own id", init("mallory", "m-0"), nil)
	want("alice inits mallory's id", init("alice", "m-1"), nil)
	for i := range per {
		want("alice's id", init("alice", fmt.Sprintf("a-%d", i)), nil)
	}
	want("alice's id beyond her bound", init("alice", "a-x"), kerr.PolicyViolation)
	want("alice commits in mallory's group", commitOffset(t, ts.client("alice"), "mg-0"), nil)
}
