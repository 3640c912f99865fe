package test

import (
	"crypto/x509/pkix"
	"errors"
	"net"
	"slices"
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/auth/authtest"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	standardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
	alicePrincipal     = "User:alice"
)

// aclServer is a server with the built-in authorizer on a SASL_PLAINTEXT
// listener, User:admin a super user; users admin and alice exist.
type aclServer struct {
	t   *testing.T
	dir string
	srv *server.Server
}

func newACLServer(t *testing.T) *aclServer {
	t.Helper()
	a := &aclServer{t: t, dir: t.TempDir()}
	addUser(t, a.dir, "admin", "admin-pw")
	addUser(t, a.dir, "alice", "alice-pw")
	a.start()
	return a
}

func (a *aclServer) start() {
	a.t.Helper()
	a.srv = startServer(a.t, server.Config{DataDir: a.dir, Kafka: saslConfig(),
		Listeners:  []kafka.Listener{{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"}},
		Resolver:   resolver.Config{NumPartitions: 1, AutoCreate: true},
		Authorizer: server.AuthorizerConfig{ClassName: standardAuthorizer, SuperUsers: []string{"User:admin"}}})
	srv := a.srv
	a.t.Cleanup(func() { srv.Close() })
}

func (a *aclServer) restart() {
	a.t.Helper()
	if err := a.srv.Close(); err != nil {
		a.t.Fatal(err)
	}
	a.start()
}

func (a *aclServer) addr() net.Addr { return a.srv.ListenerAddr("SASL_PLAINTEXT") }

// client logs in as user (password user-pw) with SCRAM-SHA-256.
func (a *aclServer) client(user string, opts ...kgo.Opt) *kgo.Client {
	return newClient(a.t, a.addr(), append([]kgo.Opt{
		kgo.SASL(mechanism(auth.ScramSHA256, user, user+"-pw"))}, opts...)...)
}

func (a *aclServer) admin() *kadm.Client { return kadm.NewClient(a.client("admin")) }

// grant creates b's ACLs as the super user.
func (a *aclServer) grant(b *kadm.ACLBuilder) {
	a.t.Helper()
	res, err := a.admin().CreateACLs(testCtx(a.t), b)
	if err != nil {
		a.t.Fatalf("create ACLs: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			a.t.Fatalf("create ACL %+v: %v", r, r.Err)
		}
	}
}

func (a *aclServer) createTopics(names ...string) {
	a.t.Helper()
	res, err := a.admin().CreateTopics(testCtx(a.t), 1, 1, nil, names...)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			a.t.Fatalf("create %s: %v", r.Topic, r.Err)
		}
	}
}

func allowAlice() *kadm.ACLBuilder { return kadm.NewACLs().Allow(alicePrincipal) }

func code(c int16) error { return kerr.ErrorForCode(c) }

// aclCase is one API of the matrix: try sends alice's request and returns
// the error code that answers the resource; without grant it is refused,
// with grant it is not.
type aclCase struct {
	name   string
	refuse *kerr.Error
	grant  *kadm.ACLBuilder
	try    func(t *testing.T, cl *kgo.Client) int16
	// ok, when set, accepts the granted answer (default: no error).
	ok func(int16) bool
}

// The ACL matrix (per-API authorization): each API with and without the ACL it needs, over
// franz-go on a SASL listener, as User:alice.
func TestACLMatrix(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("lo-1", "fetch-1", "oc-1", "dt-1", "dr-1", "dc-1", "ac-1", "cp-1", "dp-1", "ofle-1", "prod-1")
	alice := a.client("alice")
	notAuthz := func(c int16) bool {
		return !slices.Contains([]int16{kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code,
			kerr.ClusterAuthorizationFailed.Code, kerr.TransactionalIDAuthorizationFailed.Code}, c)
	}
	for _, c := range aclCases(a, notAuthz) {
		t.Run(c.name, func(t *testing.T) {
			if got := c.try(t, alice); got != c.refuse.Code {
				t.Fatalf("without the ACL: %v, want %v", code(got), c.refuse)
			}
			a.grant(c.grant)
			got := c.try(t, alice)
			if ok := c.ok; (ok == nil && got != 0) || (ok != nil && !ok(got)) {
				t.Fatalf("with the ACL: %v", code(got))
			}
		})
	}
}

func aclCases(a *aclServer, notAuthz func(int16) bool) []aclCase {
	return []aclCase{
		// First: a WRITE on any topic (Produce's below) lets an
		// idempotent producer in (KIP-679).
		{name: "InitProducerId/idempotent", refuse: kerr.ClusterAuthorizationFailed,
			grant: allowAlice().Topics("idem-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				return seedRequest[*kmsg.InitProducerIDResponse](t, cl, kmsg.NewPtrInitProducerIDRequest()).ErrorCode
			}},
		{name: "Metadata", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("meta-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpDescribe, kadm.OpCreate),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				// The creating request is answered without the topic
				// (as Kafka): ask until it is there or refused.
				var c int16
				eventually(t, "meta-1", func() bool {
					c = metadataTopic(t, cl, "meta-1").ErrorCode
					return c != kerr.UnknownTopicOrPartition.Code
				})
				return c
			}},
		{name: "ListOffsets", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("lo-1").Operations(kadm.OpDescribe),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrListOffsetsRequest()
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "lo-1"
				p := kmsg.NewListOffsetsRequestTopicPartition()
				p.Timestamp = -1
				rt.Partitions = append(rt.Partitions, p)
				req.Topics = append(req.Topics, rt)
				return seedRequest[*kmsg.ListOffsetsResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "Fetch", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("fetch-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead),
			try:   func(t *testing.T, cl *kgo.Client) int16 { return fetchCode(t, cl, aclTopicID(t, a, "fetch-1")) }},
		{name: "Produce", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("prod-1").Operations(kadm.OpWrite),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				return produceCode(t, cl, "prod-1")
			}},
		{name: "OffsetCommit/group", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-oc").Operations(kadm.OpRead),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				return offsetCommitCode(t, cl, "g-oc", "oc-1", aclTopicID(t, a, "oc-1"))
			},
			ok: func(c int16) bool { return c == kerr.TopicAuthorizationFailed.Code }},
		{name: "OffsetCommit/topic", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("oc-1").Operations(kadm.OpRead),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				return offsetCommitCode(t, cl, "g-oc", "oc-1", aclTopicID(t, a, "oc-1"))
			}},
		{name: "OffsetFetch", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-of").Operations(kadm.OpDescribe),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrOffsetFetchRequest()
				g := kmsg.NewOffsetFetchRequestGroup()
				g.Group = "g-of"
				req.Groups = append(req.Groups, g)
				return seedRequest[*kmsg.OffsetFetchResponse](t, cl, req).Groups[0].ErrorCode
			}},
		{name: "FindCoordinator/group", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-fc").Operations(kadm.OpRead), // READ implies DESCRIBE
			try:   func(t *testing.T, cl *kgo.Client) int16 { return findCoordinatorCode(t, cl, 0, "g-fc") }},
		{name: "FindCoordinator/transaction", refuse: kerr.TransactionalIDAuthorizationFailed,
			grant: allowAlice().TransactionalIDs("tx-fc").Operations(kadm.OpDescribe),
			try:   func(t *testing.T, cl *kgo.Client) int16 { return findCoordinatorCode(t, cl, 1, "tx-fc") },
			ok:    notAuthz},
		{name: "JoinGroup", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-jg").Operations(kadm.OpRead),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "g-jg", 10000, 10000, "consumer"
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name = "range"
				req.Protocols = append(req.Protocols, p)
				return seedRequest[*kmsg.JoinGroupResponse](t, cl, req).ErrorCode
			},
			ok: notAuthz}, // MEMBER_ID_REQUIRED
		{name: "DescribeGroups", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-dg").Operations(kadm.OpDescribe),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups, req.IncludeAuthorizedOperations = []string{"g-dg"}, true
				g := seedRequest[*kmsg.DescribeGroupsResponse](t, cl, req).Groups[0]
				if g.ErrorCode == 0 && g.AuthorizedOperations != 1<<kmsg.ACLOperationDescribe {
					t.Errorf("authorized operations %b, want DESCRIBE only", g.AuthorizedOperations)
				}
				return g.ErrorCode
			},
			ok: notAuthz}, // GROUP_ID_NOT_FOUND: DescribeGroups v6 of a group that does not exist
		{name: "DeleteGroups", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-del").Operations(kadm.OpDelete),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{"g-del"}
				return seedRequest[*kmsg.DeleteGroupsResponse](t, cl, req).Groups[0].ErrorCode
			},
			ok: notAuthz}, // GROUP_ID_NOT_FOUND
		{name: "OffsetDelete", refuse: kerr.GroupAuthorizationFailed,
			grant: allowAlice().Groups("g-od").Operations(kadm.OpDelete),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = "g-od"
				return seedRequest[*kmsg.OffsetDeleteResponse](t, cl, req).ErrorCode
			},
			ok: notAuthz},
		{name: "CreateTopics", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("ct-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpCreate),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrCreateTopicsRequest()
				rt := kmsg.NewCreateTopicsRequestTopic()
				rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "ct-1", 1, 1
				req.Topics = append(req.Topics, rt)
				return seedRequest[*kmsg.CreateTopicsResponse](t, cl, req).Topics[0].ErrorCode
			}},
		{name: "DeleteTopics", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("dt-1").Operations(kadm.OpDelete),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrDeleteTopicsRequest()
				name := "dt-1"
				rt := kmsg.NewDeleteTopicsRequestTopic()
				rt.Topic = &name
				req.Topics, req.TopicNames = append(req.Topics, rt), []string{name}
				return seedRequest[*kmsg.DeleteTopicsResponse](t, cl, req).Topics[0].ErrorCode
			}},
		{name: "DeleteRecords", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("dr-1").Operations(kadm.OpDelete),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrDeleteRecordsRequest()
				rt := kmsg.NewDeleteRecordsRequestTopic()
				rt.Topic = "dr-1"
				p := kmsg.NewDeleteRecordsRequestTopicPartition()
				rt.Partitions = append(rt.Partitions, p)
				req.Topics = append(req.Topics, rt)
				return seedRequest[*kmsg.DeleteRecordsResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeConfigs/topic", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("dc-1").Operations(kadm.OpAlterConfigs), // implies DESCRIBE_CONFIGS
			try: func(t *testing.T, cl *kgo.Client) int16 {
				return describeConfigsCode(t, cl, kmsg.ConfigResourceTypeTopic, "dc-1")
			}},
		{name: "DescribeConfigs/broker", refuse: kerr.ClusterAuthorizationFailed,
			grant: allowAlice().Clusters().Operations(kadm.OpDescribeConfigs),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				return describeConfigsCode(t, cl, kmsg.ConfigResourceTypeBroker, "0")
			}},
		{name: "IncrementalAlterConfigs", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("ac-1").Operations(kadm.OpAlterConfigs),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				r := kmsg.NewIncrementalAlterConfigsRequestResource()
				r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "ac-1"
				c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				v := "60000"
				c.Name, c.Value = "retention.ms", &v
				r.Configs = append(r.Configs, c)
				req.Resources = append(req.Resources, r)
				return seedRequest[*kmsg.IncrementalAlterConfigsResponse](t, cl, req).Resources[0].ErrorCode
			}},
		{name: "CreatePartitions", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("cp-1").Operations(kadm.OpAlter),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrCreatePartitionsRequest()
				rt := kmsg.NewCreatePartitionsRequestTopic()
				rt.Topic, rt.Count = "cp-1", 2
				req.Topics = append(req.Topics, rt)
				return seedRequest[*kmsg.CreatePartitionsResponse](t, cl, req).Topics[0].ErrorCode
			}},
		{name: "DescribeProducers", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("dp-1").Operations(kadm.OpRead),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrDescribeProducersRequest()
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = "dp-1", []int32{0}
				req.Topics = append(req.Topics, rt)
				return seedRequest[*kmsg.DescribeProducersResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "OffsetForLeaderEpoch", refuse: kerr.TopicAuthorizationFailed,
			grant: allowAlice().Topics("ofle-1").Operations(kadm.OpDescribe),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrOffsetForLeaderEpochRequest()
				req.ReplicaID = -1
				rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
				rt.Topic = "ofle-1"
				p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				p.CurrentLeaderEpoch = -1
				rt.Partitions = append(rt.Partitions, p)
				req.Topics = append(req.Topics, rt)
				return seedRequest[*kmsg.OffsetForLeaderEpochResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeAcls+DescribeUserScramCredentials", refuse: kerr.ClusterAuthorizationFailed,
			grant: allowAlice().Clusters().Operations(kadm.OpDescribe),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
				req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				got := seedRequest[*kmsg.DescribeACLsResponse](t, cl, req).ErrorCode
				scram := seedRequest[*kmsg.DescribeUserSCRAMCredentialsResponse](t, cl, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()).ErrorCode
				if scram != got {
					t.Errorf("DescribeAcls %v, DescribeUserScramCredentials %v", code(got), code(scram))
				}
				return got
			}},
		{name: "CreateAcls+AlterUserScramCredentials", refuse: kerr.ClusterAuthorizationFailed,
			grant: allowAlice().Clusters().Operations(kadm.OpAlter),
			try: func(t *testing.T, cl *kgo.Client) int16 {
				req := kmsg.NewPtrCreateACLsRequest()
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeLiteral
				c.Principal, c.Host, c.Operation, c.PermissionType = "User:bob", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
				req.Creations = append(req.Creations, c)
				got := seedRequest[*kmsg.CreateACLsResponse](t, cl, req).Results[0].ErrorCode
				sreq := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
				d.Name, d.Mechanism = "nobody", 1
				sreq.Deletions = append(sreq.Deletions, d)
				sres := seedRequest[*kmsg.AlterUserSCRAMCredentialsResponse](t, cl, sreq).Results[0].ErrorCode
				if (got == kerr.ClusterAuthorizationFailed.Code) != (sres == kerr.ClusterAuthorizationFailed.Code) {
					t.Errorf("CreateAcls %v, AlterUserScramCredentials %v", code(got), code(sres))
				}
				return got
			}},
	}
}

func metadataTopic(t *testing.T, cl *kgo.Client, topic string) kmsg.MetadataResponseTopic {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &topic
	req.Topics, req.AllowAutoTopicCreation = append(req.Topics, rt), true
	return seedRequest[*kmsg.MetadataResponse](t, cl, req).Topics[0]
}

func aclTopicID(t *testing.T, a *aclServer, topic string) [16]byte {
	t.Helper()
	tp, ok := a.srv.Resolver().Topic(topic)
	if !ok {
		t.Fatalf("no topic %s", topic)
	}
	return tp.ID
}

// fetchCode fetches partition 0 of the topic by id (franz-go sends v13).
func fetchCode(t *testing.T, cl *kgo.Client, id [16]byte) int16 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	p := kmsg.NewFetchRequestTopicPartition()
	p.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, p)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode
}

func produceCode(t *testing.T, cl *kgo.Client, topic string) int16 {
	t.Helper()
	err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
	var ke *kerr.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ke):
		return ke.Code
	}
	t.Fatalf("produce: %v", err)
	return 0
}

// offsetCommitCode commits to topic (by name, and by id from v10).
func offsetCommitCode(t *testing.T, cl *kgo.Client, group, topic string, id [16]byte) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, p)
	req.Topics = append(req.Topics, rt)
	return seedRequest[*kmsg.OffsetCommitResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
}

func findCoordinatorCode(t *testing.T, cl *kgo.Client, typ int8, key string) int16 {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKeys = typ, []string{key}
	return seedRequest[*kmsg.FindCoordinatorResponse](t, cl, req).Coordinators[0].ErrorCode
}

func describeConfigsCode(t *testing.T, cl *kgo.Client, typ kmsg.ConfigResourceType, name string) int16 {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	req.Resources = append(req.Resources, r)
	return seedRequest[*kmsg.DescribeConfigsResponse](t, cl, req).Resources[0].ErrorCode
}

// The authorizer's decisions, per-API authorization: a PREFIXED READ lets alice consume as a group member; a LITERAL
// DENY on one topic under the prefix wins over it; Metadata hides the
// topics she may not describe; the super user sees everything.
func TestACLPrefixedDenyAndSuperUser(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("logs-app", "logs-secret", "billing")
	admin := a.client("admin")
	for _, topic := range []string{"logs-app", "logs-secret", "billing"} {
		if err := admin.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Value: []byte(topic)}).FirstErr(); err != nil {
			t.Fatalf("super user produce %s: %v", topic, err)
		}
	}
	a.grant(allowAlice().Topics("logs-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead))
	a.grant(allowAlice().Groups("readers").Operations(kadm.OpRead))
	a.grant(kadm.NewACLs().Deny(alicePrincipal).Topics("logs-secret").Operations(kadm.OpRead))

	consumer := a.client("alice", kgo.ConsumeTopics("logs-app"), kgo.ConsumerGroup("readers"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := consumer.PollRecords(testCtx(t), 1)
	if err := fs.Err0(); err != nil {
		t.Fatalf("consume logs-app: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "logs-app" {
		t.Fatalf("consumed %v", recs)
	}
	if err := consumer.CommitUncommittedOffsets(testCtx(t)); err != nil {
		t.Fatalf("commit: %v", err)
	}

	alice := a.client("alice")
	if got := fetchCode(t, alice, aclTopicID(t, a, "logs-secret")); got != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("fetch logs-secret under DENY: %v", code(got))
	}
	if got := metadataTopic(t, alice, "logs-secret"); got.ErrorCode != 0 {
		// READ is denied, DESCRIBE (implied by the prefix READ) is not.
		t.Fatalf("metadata logs-secret: %v", code(got.ErrorCode))
	}
	if got := metadataTopic(t, alice, "billing"); got.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("metadata billing: %v", code(got.ErrorCode))
	}
	// Auto-creation needs CREATE on the cluster or the topic besides
	// DESCRIBE.
	if got := metadataTopic(t, alice, "logs-new"); got.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("auto-create without CREATE: %v", code(got.ErrorCode))
	}
	if _, ok := a.srv.Resolver().Topic("logs-new"); ok {
		t.Fatal("a topic was auto-created without CREATE")
	}
	if got := allTopics(t, alice); !slices.Equal(got, []string{"logs-app", "logs-secret"}) {
		t.Fatalf("alice sees %v", got)
	}
	if got := allTopics(t, admin); !slices.Equal(got, []string{"__consumer_offsets", "__transaction_state", "billing", "logs-app", "logs-secret"}) {
		t.Fatalf("the super user sees %v", got)
	}
}

// allTopics lists the topics of an all-topics Metadata answer, sorted.
func allTopics(t *testing.T, cl *kgo.Client) []string {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil
	var names []string
	for _, mt := range seedRequest[*kmsg.MetadataResponse](t, cl, req).Topics {
		names = append(names, *mt.Topic)
	}
	slices.Sort(names)
	return names
}

// The durable ACL store: ACLs are durable: after a restart kadm describes the same set and
// they still decide.
func TestACLsSurviveRestart(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("keep-1")
	a.grant(allowAlice().Topics("keep-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpDescribe))
	a.restart()
	alice := a.client("alice")
	if got := metadataTopic(t, alice, "keep-1"); got.ErrorCode != 0 {
		t.Fatalf("after restart: %v", code(got.ErrorCode))
	}
	res, err := a.admin().DescribeACLs(testCtx(t), kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
	if err != nil {
		t.Fatal(err)
	}
	var got []kadm.DescribedACL
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		got = append(got, r.Described...)
	}
	if len(got) != 1 || got[0].Name != "keep-" || got[0].Pattern != kadm.ACLPatternPrefixed ||
		got[0].Principal != alicePrincipal || got[0].Operation != kadm.OpDescribe {
		t.Fatalf("described after restart: %+v", got)
	}
}

// kadm's CreateACLs, DescribeACLs (MATCH) and DeleteACLs against the
// server, and CreateAcls' refusals.
func TestKadmACLs(t *testing.T) {
	a := newACLServer(t)
	adm := a.admin()
	ctx := testCtx(t)
	a.grant(allowAlice().Topics("orders").Operations(kadm.OpRead, kadm.OpWrite))
	a.grant(allowAlice().Topics("ord").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpDescribe))
	a.grant(allowAlice().Topics("other").Operations(kadm.OpRead))

	match := kadm.NewACLs().Topics("orders").ResourcePatternType(kadm.ACLPatternMatch).
		Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts()
	desc, err := adm.DescribeACLs(ctx, match)
	if err != nil {
		t.Fatal(err)
	}
	if n := countDescribed(t, desc); n != 3 { // orders READ, orders WRITE, ord* DESCRIBE
		t.Fatalf("MATCH orders described %d ACLs, want 3", n)
	}
	del, err := adm.DeleteACLs(ctx, kadm.NewACLs().Topics("orders").ResourcePatternType(kadm.ACLPatternLiteral).
		Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, r := range del {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		deleted += len(r.Deleted)
	}
	if deleted != 2 {
		t.Fatalf("deleted %d, want the 2 LITERAL orders ACLs", deleted)
	}
	desc, err = adm.DescribeACLs(ctx, match)
	if err != nil {
		t.Fatal(err)
	}
	if n := countDescribed(t, desc); n != 1 {
		t.Fatalf("after delete MATCH orders described %d, want 1", n)
	}

	// As Kafka 4.4: a MATCH pattern (Kafka cannot convert it to an ACL)
	// fails the whole request, the group WRITE beside it included, with
	// UNKNOWN_SERVER_ERROR; alone, an operation the group does not have
	// is stored, as Kafka's controller stores it.
	req := kmsg.NewPtrCreateACLsRequest()
	for _, c := range []struct {
		rt kmsg.ACLResourceType
		pt kmsg.ACLResourcePatternType
		op kmsg.ACLOperation
	}{
		{kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeMatch, kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeGroup, kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationWrite},
	} {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = c.rt, "x", c.pt
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = alicePrincipal, "*", c.op, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, cr)
	}
	for i, r := range seedRequest[*kmsg.CreateACLsResponse](t, a.client("admin"), req).Results {
		if r.ErrorCode != kerr.UnknownServerError.Code {
			t.Errorf("creation %d: %v, want UNKNOWN_SERVER_ERROR", i, code(r.ErrorCode))
		}
	}
	req.Creations = req.Creations[1:]
	if r := seedRequest[*kmsg.CreateACLsResponse](t, a.client("admin"), req).Results[0]; r.ErrorCode != 0 {
		t.Errorf("group WRITE alone: %v", code(r.ErrorCode))
	}
}

func countDescribed(t *testing.T, res kadm.DescribeACLsResults) int {
	t.Helper()
	n := 0
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		n += len(r.Described)
	}
	return n
}

// Per-API authorization: authorized_operations in Metadata and DescribeCluster when asked.
func TestAuthorizedOperations(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("ops-1")
	a.grant(allowAlice().Topics("ops-1").Operations(kadm.OpRead))
	a.grant(allowAlice().Clusters().Operations(kadm.OpDescribe))
	alice := a.client("alice")
	req := kmsg.NewPtrMetadataRequest()
	name := "ops-1"
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &name
	req.Topics, req.IncludeTopicAuthorizedOperations = append(req.Topics, rt), true
	mt := seedRequest[*kmsg.MetadataResponse](t, alice, req).Topics[0]
	if want := int32(1<<kmsg.ACLOperationRead | 1<<kmsg.ACLOperationDescribe); mt.AuthorizedOperations != want {
		t.Fatalf("topic operations %v, want READ, DESCRIBE", kadm.DecodeACLOperations(mt.AuthorizedOperations))
	}
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.IncludeClusterAuthorizedOperations = true
	got := seedRequest[*kmsg.DescribeClusterResponse](t, alice, dreq).ClusterAuthorizedOperations
	if got != 1<<kmsg.ACLOperationDescribe {
		t.Fatalf("cluster operations %v, want DESCRIBE", kadm.DecodeACLOperations(got))
	}
}

// Without authorizer.class.name the ACL APIs answer SECURITY_DISABLED and
// authorized_operations lists every supported operation.
func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if got := request[*kmsg.DescribeACLsResponse](t, cl, req).ErrorCode; got != kerr.SecurityDisabled.Code {
		t.Fatalf("DescribeAcls: %v", code(got))
	}
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.IncludeClusterAuthorizedOperations = true
	if got := request[*kmsg.DescribeClusterResponse](t, cl, dreq).ClusterAuthorizedOperations; len(kadm.DecodeACLOperations(got)) != 7 {
		t.Fatalf("cluster operations %v", kadm.DecodeACLOperations(got))
	}
}

// The principal mapping, the authorizer's decisions: the principal ACLs are matched against comes from the
// connection: User:ANONYMOUS on PLAINTEXT, User: and the certificate's
// subject with mTLS. The ACLs are written to the data directory before
// the server opens (the durable ACL store: it loads them).
func TestACLPrincipalFromConnection(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	dir := t.TempDir()
	store, err := auth.OpenACLStore(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	describe := func(principal, topic string) auth.ACL {
		return auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: topic, PatternType: auth.PatternLiteral,
			Principal: principal, Host: "*", Operation: auth.OpDescribe, Permission: auth.PermissionAllow}
	}
	if err := store.Create([]auth.ACL{describe("User:ANONYMOUS", "anon-t"), describe("User:CN=alice", "mtls-t")}); err != nil {
		t.Fatal(err)
	}
	ssl, _ := tlsListener(t, ca, "SSL", kafka.SSL, "required")
	s := startServer(t, server.Config{DataDir: dir,
		Listeners:  []kafka.Listener{{Name: "PLAINTEXT", Protocol: kafka.Plaintext, Addr: "127.0.0.1:0"}, ssl},
		Resolver:   resolver.Config{NumPartitions: 1, AutoCreate: true},
		Authorizer: server.AuthorizerConfig{ClassName: "kafka.security.authorizer.AclAuthorizer"}})
	t.Cleanup(func() { s.Close() })
	for _, topic := range []string{"anon-t", "mtls-t"} {
		if _, err := s.Resolver().EnsureTopic(topic); err != nil {
			t.Fatal(err)
		}
	}
	plain := newClient(t, s.ListenerAddr("PLAINTEXT"))
	mtls := newClient(t, s.ListenerAddr("SSL"),
		kgo.DialTLSConfig(ca.ClientTLS(t, ca.Client("alice.pem", pkix.Name{CommonName: "alice"}))))
	for _, c := range []struct {
		who   string
		cl    *kgo.Client
		topic string
		want  int16
	}{
		{"anonymous", plain, "anon-t", 0},
		{"anonymous", plain, "mtls-t", kerr.TopicAuthorizationFailed.Code},
		{"mTLS alice", mtls, "mtls-t", 0},
		{"mTLS alice", mtls, "anon-t", kerr.TopicAuthorizationFailed.Code},
	} {
		if got := metadataTopic(t, c.cl, c.topic).ErrorCode; got != c.want {
			t.Errorf("%s, %s: %v, want %v", c.who, c.topic, code(got), code(c.want))
		}
	}
}

// Per-API authorization: a fetch session's partitions are authorized at every fetch, not
// only when the request names them: once the READ is deleted, an
// incremental fetch naming nothing gets TOPIC_AUTHORIZATION_FAILED for
// the session's partition.
func TestACLFetchSessionRechecked(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("sess-1")
	read := allowAlice().Topics("sess-1").Operations(kadm.OpRead)
	a.grant(read)
	alice := a.client("alice")
	id := aclTopicID(t, a, "sess-1")

	full := kmsg.NewPtrFetchRequest()
	full.ReplicaID, full.MaxBytes, full.SessionEpoch = -1, 1<<20, 0
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	p := kmsg.NewFetchRequestTopicPartition()
	p.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, p)
	full.Topics = append(full.Topics, rt)
	resp := seedRequest[*kmsg.FetchResponse](t, alice, full)
	if resp.ErrorCode != 0 || resp.SessionID == 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("full fetch: error %v, session %d, %+v", code(resp.ErrorCode), resp.SessionID, resp.Topics)
	}
	res, err := a.admin().DeleteACLs(testCtx(t), read.AllowHosts("*"))
	if err != nil || len(res) == 0 || res[0].Err != nil || len(res[0].Deleted) != 1 {
		t.Fatalf("delete ACL: %v %+v", err, res)
	}
	inc := kmsg.NewPtrFetchRequest()
	inc.ReplicaID, inc.MaxBytes, inc.SessionID, inc.SessionEpoch = -1, 1<<20, resp.SessionID, 1
	resp = seedRequest[*kmsg.FetchResponse](t, alice, inc)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("incremental fetch after the READ was deleted: error %v, %+v", code(resp.ErrorCode), resp.Topics)
	}
}

// The durable ACL store: an acknowledged CreateAcls survives SIGKILL of the process: the
// binary, authorizer on from its flags, is killed right after kadm's
// answer and restarted without super users, and the ACLs still decide.
func TestACLsSurviveKill(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir, "--authorizer-class-name", standardAuthorizer, "--super-users", "User:ANONYMOUS")
	cl := newClient(t, procAddr(t, p))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(testCtx(t), 1, 1, nil, "k-1", "other"); err != nil {
		t.Fatal(err)
	}
	res, err := adm.CreateACLs(testCtx(t), kadm.NewACLs().Allow("User:ANONYMOUS").
		Topics("k-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpDescribe))
	if err != nil || res[0].Err != nil {
		t.Fatalf("create ACL: %v %+v", err, res)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	cl.Close()

	p = startBinary(t, dir, "--authorizer-class-name", standardAuthorizer)
	cl = newClient(t, procAddr(t, p))
	if got := metadataTopic(t, cl, "k-1").ErrorCode; got != 0 {
		t.Fatalf("k-1 after kill: %v", code(got))
	}
	if got := metadataTopic(t, cl, "other").ErrorCode; got != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("other after kill: %v", code(got))
	}
}

func procAddr(t *testing.T, p *proc) net.Addr {
	t.Helper()
	addr, err := net.ResolveTCPAddr("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
