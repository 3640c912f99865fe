package kafkadiff

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	"github.com/kgateway/kgateway/test/apachekafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The authorizer pair is a second kgateway and Apache Kafka, each with
// ACL authorization on (StandardAuthorizer, allow.everyone.if.no.acl.found
// false) and a SASL_PLAINTEXT listener whose PLAIN users are users. It is
// started the first time an authorizer case runs, so that a run without
// them starts no more JVMs than before.
var users = map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

// superUsers are allowed everything: admin, who sets up ACLs, and
// ANONYMOUS, the principal of the PLAINTEXT listener that Kafka's broker
// uses to reach its own controller (no case connects there).
const superUsers = "User:admin;User:ANONYMOUS"

const authorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

var (
	authzOnce  sync.Once
	authzSides [2]*side
	authzErr   error
	authzStop  = func() {}
)

// dial connects to s: as user on its SASL listener, or ("") to its
// PLAINTEXT one.
func (s *side) dial(user string) (*Conn, error) {
	if user == "" {
		return Dial(s.addr)
	}
	return DialPlain(s.saslAddr, user, users[user])
}

// as makes the run's next requests come from user (a new connection).
func (r *run) as(user string) {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
	r.user = user
}

// authzPair starts the authorizer pair once and returns it.
func authzPair() ([2]*side, error) {
	authzOnce.Do(func() { authzSides, authzErr = startAuthz() })
	return authzSides, authzErr
}

func stopAuthz() { authzStop() }

func startAuthz() ([2]*side, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startDeadline)
	defer cancel()
	var (
		wg           sync.WaitGroup
		broker       *apachekafka.Broker
		akErr, kgErr error
		proc         *exec.Cmd
		kgDir        string
		kgAddrs      map[string]string
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		opts, err := withTelemetryPlugin(apachekafka.Options{
			Heap:       []string{"-Xmx512m"},
			PlainUsers: users,
			Props: map[string]string{
				"group.initial.rebalance.delay.ms": "0",
				"authorizer.class.name":            authorizerClass,
				"allow.everyone.if.no.acl.found":   "false",
				"super.users":                      superUsers,
			},
		})
		if err != nil {
			akErr = err
			return
		}
		broker, akErr = apachekafka.Start(ctx, opts)
	}()
	go func() {
		defer wg.Done()
		proc, kgDir, kgAddrs, kgErr = startKgatewayArgs(ctx, users,
			"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
			"--sasl-enabled-mechanisms", "PLAIN",
			"--authorizer-class-name", authorizerClass,
			"--allow-everyone-if-no-acl-found=false",
			"--super-users", superUsers)
	}()
	wg.Wait()
	authzStop = stopPair("kafka (authorizer)", broker, proc, kgDir)
	if akErr != nil {
		return [2]*side{}, fmt.Errorf("start kafka with an authorizer: %w", akErr)
	}
	if kgErr != nil {
		return [2]*side{}, fmt.Errorf("start kgateway with an authorizer: %w", kgErr)
	}
	pair := [2]*side{
		{name: "kgateway", addr: kgAddrs["PLAINTEXT"], saslAddr: kgAddrs["SASL_PLAINTEXT"], admin: "admin"},
		{name: "kafka", addr: broker.Addr, saslAddr: broker.SASLAddr, admin: "admin"},
	}
	for _, s := range pair {
		if err := s.learn(ctx); err != nil {
			return [2]*side{}, fmt.Errorf("%s with an authorizer: %w", s.name, err)
		}
	}
	return pair, nil
}

// authzCorpus is the cases run against the authorizer pair. They run in
// parallel on one pair, so each names its own resources (kd-az-<case>-)
// and alice's and bob's answers are filtered to them; bob is the cluster
// case's alone, since cluster ACLs reach every resource.
func authzCorpus() []diffCase {
	return []diffCase{
		{"authz-acls", caseAuthzACLs},
		{"authz-topic", caseAuthzTopic},
		{"authz-deny", caseAuthzDeny},
		{"authz-create-topics", caseAuthzCreateTopics},
		{"authz-group", caseAuthzGroup},
		{"authz-txn", caseAuthzTxn},
		{"authz-cluster", caseAuthzCluster},
		{"authz-tokens-disabled", caseAuthzTokensDisabled},
	}
}

// acl is one ACL binding.
type acl struct {
	res     kmsg.ACLResourceType
	name    string
	pattern kmsg.ACLResourcePatternType
	user    string // one of users: principal "User:"+user; anything else as is
	op      kmsg.ACLOperation
	perm    kmsg.ACLPermissionType
}

func (a acl) principal() string {
	if _, ok := users[a.user]; ok {
		return "User:" + a.user
	}
	return a.user
}

func (a acl) creation() kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = a.res, a.name, a.pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = a.principal(), "*", a.op, a.perm
	return c
}

// describeFilter is the DescribeAcls filter matching exactly a.
func (a acl) describe() *kmsg.DescribeACLsRequest {
	d := kmsg.NewPtrDescribeACLsRequest()
	d.ResourceType, d.ResourceName, d.ResourcePatternType = a.res, kmsg.StringPtr(a.name), a.pattern
	d.Principal, d.Host, d.Operation, d.PermissionType = kmsg.StringPtr(a.principal()), kmsg.StringPtr("*"), a.op, a.perm
	return d
}

func allow(res kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, user string, op kmsg.ACLOperation) acl {
	return acl{res, name, pattern, user, op, kmsg.ACLPermissionTypeAllow}
}

func deny(res kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, user string, op kmsg.ACLOperation) acl {
	return acl{res, name, pattern, user, op, kmsg.ACLPermissionTypeDeny}
}

const (
	lit    = kmsg.ACLResourcePatternTypeLiteral
	prefix = kmsg.ACLResourcePatternTypePrefixed
)

// grant creates acls as admin (unrecorded) and waits until DescribeAcls
// lists each: Kafka's broker authorizer learns of an ACL from the metadata
// log a moment after CreateAcls answers. The run goes on as its user.
func (r *run) grant(acls ...acl) {
	user := r.user
	r.as("admin")
	ca := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		ca.Creations = append(ca.Creations, a.creation())
	}
	r.setup(ca)
	r.awaitACLs(acls...)
	r.as(user)
}

// awaitACLs waits (unrecorded, on the run's connection) until DescribeAcls
// lists each of acls.
func (r *run) awaitACLs(acls ...acl) {
	for _, a := range acls {
		r.await("acl "+a.name, a.describe(), func(resp kmsg.Response) bool {
			d := resp.(*kmsg.DescribeACLsResponse)
			return d.ErrorCode == 0 && len(d.Resources) == 1
		})
	}
}

// keepOnly keeps, of each recorded answer, the array elements (topics,
// groups) whose key names one of the case's resources: the authorizer
// cases run in parallel, and an all-topics Metadata or ListGroups sees
// the others'.
func keepOnly(prefix string) func(map[string]string) {
	return func(flat map[string]string) {
		for p := range flat {
			for _, arr := range []string{"Topics[", "Groups["} {
				if i := strings.Index(p, arr); i >= 0 && !strings.HasPrefix(p[i+len(arr):], "Topic="+prefix) &&
					!strings.HasPrefix(p[i+len(arr):], "Group="+prefix) {
					delete(flat, p)
				}
			}
		}
	}
}

// caseAuthzACLs manages ACLs as admin: literal and prefixed bindings,
// invalid creations, describe and delete filters (literal, prefixed,
// MATCH, ANY, invalid), and the same requests from alice, who may not.
func caseAuthzACLs(r *run) {
	const n = "kd-az-acl-"
	r.as("admin")
	good := []acl{
		allow(kmsg.ACLResourceTypeTopic, n+"t", lit, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeTopic, n+"p", prefix, "alice", kmsg.ACLOperationWrite),
		deny(kmsg.ACLResourceTypeTopic, n+"t", lit, "bob", kmsg.ACLOperationDescribe),
		allow(kmsg.ACLResourceTypeGroup, n+"g", lit, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeTransactionalId, n+"x", prefix, "alice", kmsg.ACLOperationWrite),
	}
	ca := kmsg.NewPtrCreateACLsRequest()
	for _, a := range good {
		ca.Creations = append(ca.Creations, a.creation())
	}
	r.do("create literal and prefixed acls", ca)
	r.awaitACLs(good...)
	bad := []acl{
		allow(kmsg.ACLResourceTypeAny, n+"bad", lit, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeTopic, n+"bad", kmsg.ACLResourcePatternTypeMatch, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeTopic, n+"bad", kmsg.ACLResourcePatternTypeAny, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeTopic, n+"bad", lit, "alice", kmsg.ACLOperationAny),
		allow(kmsg.ACLResourceTypeTopic, n+"bad", lit, "alice-without-type", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeCluster, n+"bad", lit, "alice", kmsg.ACLOperationAlter),
		{kmsg.ACLResourceTypeTopic, n + "bad", lit, "alice", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAny},
		allow(kmsg.ACLResourceTypeTopic, n+"bad", lit, "alice", kmsg.ACLOperationIdempotentWrite),
	}
	for _, a := range bad {
		ca := kmsg.NewPtrCreateACLsRequest()
		ca.Creations = append(ca.Creations, a.creation())
		r.do(fmt.Sprintf("create invalid acl %s/%s/%s/%s/%s/%s", a.res, a.pattern, a.op, a.perm, a.principal(), a.name), ca)
	}
	filter := func(res kmsg.ACLResourceType, name *string, pattern kmsg.ACLResourcePatternType, principal *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) *kmsg.DescribeACLsRequest {
		d := kmsg.NewPtrDescribeACLsRequest()
		d.ResourceType, d.ResourceName, d.ResourcePatternType = res, name, pattern
		d.Principal, d.Operation, d.PermissionType = principal, op, perm
		return d
	}
	anyTopic := func(name string, pattern kmsg.ACLResourcePatternType) *kmsg.DescribeACLsRequest {
		return filter(kmsg.ACLResourceTypeAny, kmsg.StringPtr(name), pattern, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny)
	}
	r.do("describe literal name, literal", anyTopic(n+"t", lit))
	r.do("describe literal name, any pattern", anyTopic(n+"t", kmsg.ACLResourcePatternTypeAny))
	r.do("describe prefixed name, prefixed", anyTopic(n+"p", prefix))
	r.do("describe a name under the prefix, match", anyTopic(n+"p-under", kmsg.ACLResourcePatternTypeMatch))
	r.do("describe a name under the prefix, literal", anyTopic(n+"p-under", lit))
	r.do("describe the group, match", anyTopic(n+"g", kmsg.ACLResourcePatternTypeMatch))
	r.do("describe by principal and operation", filter(kmsg.ACLResourceTypeTopic, kmsg.StringPtr(n+"t"), kmsg.ACLResourcePatternTypeAny,
		kmsg.StringPtr("User:bob"), kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeDeny))
	r.do("describe by permission only allow", filter(kmsg.ACLResourceTypeTopic, kmsg.StringPtr(n+"t"), lit, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAllow))
	r.do("describe invalid: unknown resource type", filter(kmsg.ACLResourceTypeUnknown, kmsg.StringPtr(n+"t"), lit, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny))
	r.do("describe invalid: unknown pattern type", filter(kmsg.ACLResourceTypeAny, kmsg.StringPtr(n+"t"), kmsg.ACLResourcePatternTypeUnknown, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny))
	r.do("describe invalid: unknown operation", filter(kmsg.ACLResourceTypeAny, kmsg.StringPtr(n+"t"), lit, nil, kmsg.ACLOperationUnknown, kmsg.ACLPermissionTypeAny))

	r.as("alice")
	r.do("describe as alice (no cluster describe)", anyTopic(n+"t", lit))
	ca = kmsg.NewPtrCreateACLsRequest()
	ca.Creations = append(ca.Creations, allow(kmsg.ACLResourceTypeTopic, n+"alice", lit, "alice", kmsg.ACLOperationAll).creation())
	r.do("create as alice (no cluster alter)", ca)
	del := func(res kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal *string, op kmsg.ACLOperation) *kmsg.DeleteACLsRequest {
		dl := kmsg.NewPtrDeleteACLsRequest()
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = res, kmsg.StringPtr(name), pattern
		f.Principal, f.Operation, f.PermissionType = principal, op, kmsg.ACLPermissionTypeAny
		dl.Filters = append(dl.Filters, f)
		return dl
	}
	r.do("delete as alice (no cluster alter)", del(kmsg.ACLResourceTypeAny, n+"t", lit, nil, kmsg.ACLOperationAny))

	r.as("admin")
	r.do("delete matching nothing", del(kmsg.ACLResourceTypeTopic, n+"none", lit, nil, kmsg.ACLOperationAny))
	r.do("delete invalid: unknown operation", del(kmsg.ACLResourceTypeTopic, n+"t", lit, nil, kmsg.ACLOperationUnknown))
	r.do("delete the bob deny by principal", del(kmsg.ACLResourceTypeTopic, n+"t", lit, kmsg.StringPtr("User:bob"), kmsg.ACLOperationAny))
	r.do("delete a name under the prefix, match", del(kmsg.ACLResourceTypeTopic, n+"p-under", kmsg.ACLResourcePatternTypeMatch, nil, kmsg.ACLOperationAny))
	r.do("delete everything of the case, any", del(kmsg.ACLResourceTypeAny, n+"g", kmsg.ACLResourcePatternTypeAny, nil, kmsg.ACLOperationAny))
	r.await("acls deleted", anyTopic(n+"p", kmsg.ACLResourcePatternTypeAny), func(resp kmsg.Response) bool {
		return len(resp.(*kmsg.DescribeACLsResponse).Resources) == 0
	})
	r.do("describe after deletes", anyTopic(n+"t", kmsg.ACLResourcePatternTypeAny))
}

// adminOps are the cluster-scoped admin requests the cluster case sends,
// each recorded: DESCRIBE (log dirs, reassignments), DESCRIBE_CONFIGS
// (config resources) and ALTER (the others, never granted) on the
// cluster.
func (r *run) adminOps(when, topic string) {
	r.filter = logDirsFilter
	r.do("describe log dirs "+when, describeLogDirs(map[string][]int32{topic: {0}}))
	r.filter = nil
	r.do("alter replica log dirs "+when, alterLogDirs("/kd-az-cl-dir", topic, 0))
	r.do("elect leaders "+when, electLeaders(0, topic, 0))
	r.do("reassign "+when, reassign(topic, 0, []int32{r.side.nodeID}))
	list := kmsg.NewPtrListPartitionReassignmentsRequest()
	list.TimeoutMillis = 30000
	r.do("list reassignments "+when, list)
	r.doV("update features, validate only, "+when, 1, updateFeatures(1, true, "transaction.version", 2, 1))
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if strings.HasPrefix(p, "ConfigResources[") && !strings.Contains(p, "kd-az-cl") {
				delete(flat, p)
			}
		}
	}
	r.doV("list config resources "+when, 1, listConfigResources(1, 2))
	r.filter = nil
}

// topicOps are the topic requests the topic case sends, each recorded.
func (r *run) topicOps(when, topic string) {
	r.do("metadata of the topic "+when, metadataReq(false, topic))
	r.do("describe topic partitions "+when, dtp(10, nil, topic, topic+"-missing"))
	r.produce("produce "+when, topic, 0, Batch{Records: Recs("az", 1)})
	r.fetch("fetch "+when, -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.listOffsets("list offsets "+when, -1, topic, 0, -1, 0)
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName, dr.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, []string{"retention.ms"}
	dc.Resources = append(dc.Resources, dr)
	r.do("describe configs "+when, dc)
	ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	ic.Name, ic.Op, ic.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, str("600000")
	ir.Configs = append(ir.Configs, ic)
	ia.Resources = append(ia.Resources, ir)
	r.do("alter configs "+when, ia)
}

// caseAuthzTopic probes alice on a topic with no ACL, then with each ACL
// its requests need, and last DeleteTopics without and with DELETE.
func caseAuthzTopic(r *run) {
	const topic = "kd-az-topic"
	r.as("admin")
	r.createTopic(topic, 1)
	r.as("alice")
	r.filter = keepOnly("kd-az-topic")
	r.do("metadata all topics, no acl", metadataReq(false))
	r.do("describe topic partitions of all topics, no acl", dtp(2000, nil))
	r.filter = nil
	r.do("metadata of a missing topic, no acl", metadataReq(true, "kd-az-topic-missing"))
	r.topicOps("without acls", topic)
	r.grant(allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationDescribe))
	r.filter = keepOnly("kd-az-topic")
	r.do("metadata all topics, describe", metadataReq(false))
	r.do("describe topic partitions of all topics, describe", dtp(2000, nil))
	r.filter = nil
	r.topicOps("with describe", topic)
	r.grant(allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationWrite),
		allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationDescribeConfigs),
		allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationAlterConfigs))
	r.topicOps("with read write and configs", topic)
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TimeoutMillis = 30000
	dt.TopicNames = []string{topic}
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr(topic)}}
	r.do("delete topic without delete", dt)
	r.grant(allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationDelete))
	r.do("delete topic with delete", dt)
}

// caseAuthzDeny: a DENY wins over an ALLOW, literal or prefixed.
func caseAuthzDeny(r *run) {
	const topic = "kd-az-deny-t"
	r.as("admin")
	r.createTopic(topic, 1)
	r.as("alice")
	r.grant(allow(kmsg.ACLResourceTypeTopic, "kd-az-deny-", prefix, "alice", kmsg.ACLOperationAll),
		deny(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationRead))
	r.do("metadata under allow all", metadataReq(false, topic))
	r.produce("produce under allow all", topic, 0, Batch{Records: Recs("d", 1)})
	r.fetch("fetch denied read", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.grant(deny(kmsg.ACLResourceTypeTopic, "kd-az-deny-", prefix, "alice", kmsg.ACLOperationWrite))
	r.produce("produce denied write by prefix", topic, 0, Batch{Records: Recs("d", 1)})
	r.grant(deny(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationAll))
	r.do("metadata denied all", metadataReq(false, topic))
}

// caseAuthzCreateTopics: creating a topic needs CREATE on it (or on the
// cluster, the cluster case's); validate-only too.
func caseAuthzCreateTopics(r *run) {
	r.as("alice")
	ct := func(name string, validate bool) {
		req := kmsg.NewPtrCreateTopicsRequest()
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, 1, 1
		req.Topics, req.TimeoutMillis, req.ValidateOnly = append(req.Topics, t), 30000, validate
		r.filter = func(flat map[string]string) {
			for p := range flat {
				if strings.Contains(p, ".Configs[") {
					delete(flat, p)
				}
			}
		}
		r.do(fmt.Sprintf("create %s validate=%v", name, validate), req)
		r.filter = nil
	}
	ct("kd-az-ct-a", true)
	ct("kd-az-ct-a", false)
	r.do("metadata auto-create without create", metadataReq(true, "kd-az-ct-auto"))
	r.grant(allow(kmsg.ACLResourceTypeTopic, "kd-az-ct-", prefix, "alice", kmsg.ACLOperationCreate))
	ct("kd-az-ct-a", true)
	ct("kd-az-ct-a", false)
	ct("kd-az-other", false)
}

// groupOps are the group requests the group case sends, each recorded.
func (r *run) groupOps(when, g, topic string) {
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 0, []string{g}
	r.do("find coordinator "+when, fc)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = g, -1
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = topic
	ocp := kmsg.NewOffsetCommitRequestTopicPartition()
	ocp.Partition, ocp.Offset, ocp.LeaderEpoch = 0, 1, -1
	oct.Partitions = append(oct.Partitions, ocp)
	oc.Topics = append(oc.Topics, oct)
	r.do("offset commit "+when, oc)
	of := kmsg.NewPtrOffsetFetchRequest()
	ofg := kmsg.NewOffsetFetchRequestGroup()
	ofg.Group = g
	ofg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0}}}
	of.Groups = append(of.Groups, ofg)
	r.do("offset fetch "+when, of)
	of = kmsg.NewPtrOffsetFetchRequest()
	ofg = kmsg.NewOffsetFetchRequestGroup()
	ofg.Group = g
	of.Groups = append(of.Groups, ofg)
	r.do("offset fetch all "+when, of)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{g}, true
	r.do("describe group "+when, dg)
	jg := kmsg.NewPtrJoinGroupRequest()
	// Another group: a join answered MEMBER_ID_REQUIRED leaves Kafka a
	// pending member for a while, which the list below would see.
	jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = "kd-az-join", 30000, 30000, "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0}}}
	r.do("join group "+when, jg)
	r.filter = keepOnly("kd-az-grp")
	r.do("list groups "+when, kmsg.NewPtrListGroupsRequest())
	r.filter = nil
}

// caseAuthzGroup probes alice on a group without ACLs, with READ on the
// group only, and with READ on the group and the topic.
func caseAuthzGroup(r *run) {
	const g, topic = "kd-az-grp", "kd-az-grp-t"
	r.as("admin")
	r.createTopic(topic, 1)
	r.awaitCoordinator(0, g)
	r.as("alice")
	r.groupOps("without acls", g, topic)
	r.grant(allow(kmsg.ACLResourceTypeGroup, g, lit, "alice", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeGroup, "kd-az-join", lit, "alice", kmsg.ACLOperationRead))
	r.groupOps("with group read", g, topic)
	r.grant(allow(kmsg.ACLResourceTypeTopic, topic, lit, "alice", kmsg.ACLOperationRead))
	r.groupOps("with group and topic read", g, topic)
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{g}
	r.do("delete group without delete", dg)
}

// caseAuthzTxn: a transactional id needs WRITE (DESCRIBE to find its
// coordinator).
func caseAuthzTxn(r *run) {
	const txn = "kd-az-txn"
	r.as("admin")
	r.awaitCoordinator(1, txn)
	r.as("alice")
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{txn}
	r.do("find coordinator without acls", fc)
	r.initProducer("init producer id without acls", str(txn), -1, -1)
	r.grant(allow(kmsg.ACLResourceTypeTransactionalId, txn, lit, "alice", kmsg.ACLOperationDescribe))
	r.do("find coordinator with describe", fc)
	r.initProducer("init producer id with describe", str(txn), -1, -1)
	r.grant(allow(kmsg.ACLResourceTypeTransactionalId, txn, lit, "alice", kmsg.ACLOperationWrite))
	r.initProducer("init producer id with write", str(txn), -1, -1)
}

// caseAuthzCluster is bob's: cluster-level requests and authorized
// operations (KIP-430) without and with cluster ACLs, idempotent
// producers, and what bob sees of topics and groups.
func caseAuthzCluster(r *run) {
	const topic, g = "kd-az-cl-t", "kd-az-cl-g"
	r.as("admin")
	r.createTopic(topic, 1)
	r.awaitCoordinator(0, g)
	r.as("bob")
	probe := func(when string) {
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.IncludeClusterAuthorizedOperations = true
		r.do("describe cluster "+when, dc)
		md := metadataReq(false, topic)
		md.IncludeClusterAuthorizedOperations = true
		r.filter = keepOnly("kd-az-cl")
		r.doV("metadata v10 with cluster operations "+when, 10, md)
		r.do("metadata all topics "+when, metadataReq(false))
		r.do("list groups "+when, kmsg.NewPtrListGroupsRequest())
		r.filter = nil
		r.initProducer("idempotent init producer id "+when, nil, -1, -1)
		bc := kmsg.NewPtrDescribeConfigsRequest()
		br := kmsg.NewDescribeConfigsRequestResource()
		br.ResourceType, br.ResourceName, br.ConfigNames = kmsg.ConfigResourceTypeBroker, itoa(int(r.side.nodeID)), []string{"log.retention.hours"}
		bc.Resources = append(bc.Resources, br)
		// Only whether bob may: the values are the configs cases'.
		node := r.nodeFilter()
		r.filter = func(flat map[string]string) {
			node(flat)
			for p := range flat {
				if strings.Contains(p, ".Configs") {
					delete(flat, p)
				}
			}
		}
		r.do("describe broker configs "+when, bc)
		r.filter = nil
		r.adminOps(when, topic)
		// Client telemetry needs no ACL; client-metrics resources need
		// DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster (KIP-714).
		r.do("get telemetry subscriptions "+when, kmsg.NewPtrGetTelemetrySubscriptionsRequest())
		r.do("describe client metrics "+when, describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-az-cl-cm", "interval.ms"))
		r.alterClientMetrics("alter client metrics (validate only) "+when, "kd-az-cl-cm", true,
			clientMetricsOp("interval.ms", kmsg.IncrementalAlterConfigOpSet, str("1000")))
	}
	probe("without acls")
	r.grant(allow(kmsg.ACLResourceTypeTopic, topic, lit, "bob", kmsg.ACLOperationRead),
		allow(kmsg.ACLResourceTypeGroup, g, lit, "bob", kmsg.ACLOperationRead))
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = g, -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 0, LeaderEpoch: -1}}}}
	r.do("commit to bob's group", oc)
	probe("with topic and group read")
	r.grant(allow(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, "bob", kmsg.ACLOperationDescribe),
		allow(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, "bob", kmsg.ACLOperationIdempotentWrite),
		allow(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, "bob", kmsg.ACLOperationDescribeConfigs))
	probe("with cluster describe")
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = "kd-az-cl-new", 1, 1
	req.Topics, req.TimeoutMillis, req.ValidateOnly = append(req.Topics, t), 30000, true
	r.do("create topic without create", req)
	r.grant(allow(kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, "bob", kmsg.ACLOperationCreate))
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if strings.Contains(p, ".Configs[") {
				delete(flat, p)
			}
		}
	}
	r.do("create topic with cluster create", req)
	r.filter = nil
}
