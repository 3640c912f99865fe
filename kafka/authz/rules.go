package authz

// The authorization table (per-API authorization): per API key, the operations and resources
// a request needs, with Kafka's mapping (KafkaApis). Refused topics get
// TOPIC_AUTHORIZATION_FAILED, groups GROUP_AUTHORIZATION_FAILED, the
// cluster CLUSTER_AUTHORIZATION_FAILED, transactional ids
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, each where the response has a
// place for it.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authzRules maps every API key to its rule; noCheck for the APIs Kafka
// serves to anyone (ApiVersions, the SASL exchange).
var authzRules map[int16]Rule

func init() {
	authzRules = map[int16]Rule{
		0:  authzProduce,
		1:  noCheck, // per partition in the handler: fetch sessions hold topics the request does not name
		2:  authzListOffsets,
		3:  authzMetadata,
		8:  authzOffsetCommit,
		9:  authzOffsetFetch,
		10: authzFindCoordinator,
		11: authzGroupError(func(r kmsg.Request) string { return r.(*kmsg.JoinGroupRequest).Group }),
		12: authzGroupError(func(r kmsg.Request) string { return r.(*kmsg.HeartbeatRequest).Group }),
		13: authzGroupError(func(r kmsg.Request) string { return r.(*kmsg.LeaveGroupRequest).Group }),
		14: authzGroupError(func(r kmsg.Request) string { return r.(*kmsg.SyncGroupRequest).Group }),
		15: authzDescribeGroups,
		16: authzListGroups,
		17: noCheck,
		18: noCheck,
		19: authzCreateTopics,
		20: authzDeleteTopics,
		21: authzDeleteRecords,
		22: authzInitProducerID,
		23: authzOffsetForLeaderEpoch,
		24: authzAddPartitionsToTxn,
		25: authzAddOffsetsToTxn,
		26: authzEndTxn,
		27: noCheck, // ALTER or CLUSTER_ACTION on the cluster, in the handler
		28: authzTxnOffsetCommit,
		29: noCheck, // DESCRIBE on the cluster, in the handler (SECURITY_DISABLED first)
		30: noCheck, // ALTER on the cluster, in the handler
		31: noCheck, // ALTER on the cluster, in the handler
		32: authzDescribeConfigs,
		33: authzAlterConfigs,
		34: noCheck, // ALTER on the cluster, in the handler, per partition
		35: noCheck, // DESCRIBE on the cluster, in the handler
		36: noCheck,
		37: authzCreatePartitions,
		38: noCheck, // delegation tokens: USER and DELEGATION_TOKEN resources in kafka/token
		39: noCheck,
		40: noCheck,
		41: noCheck,
		42: authzDeleteGroups,
		43: noCheck, // ALTER on the cluster, in the handler
		44: authzIncrementalAlterConfigs,
		45: noCheck, // ALTER on the cluster, in the handler
		46: noCheck, // DESCRIBE on the cluster, in the handler
		47: authzOffsetDelete,
		48: authzDescribeClientQuotas,
		49: authzAlterClientQuotas,
		50: authzDescribeScram,
		51: authzAlterScram,
		57: noCheck, // ALTER on the cluster, in the handler
		60: authzDescribeCluster,
		61: authzDescribeProducers,
		65: authzDescribeTransactions,
		66: authzListTransactions,
		68: authzConsumerGroupHeartbeat,
		69: authzConsumerGroupDescribe,
		71: noCheck, // client telemetry: Kafka authorizes neither (KIP-714)
		72: noCheck,
		74: noCheck, // DESCRIBE_CONFIGS on the cluster, in the handler
		75: noCheck, // DESCRIBE per topic in the handler, which pages only describable topics
		88: authzStreamsGroupHeartbeat,
		89: authzStreamsGroupDescribe,
		93: authzStreamsGroupTopologyDescriptionUpdate,
	}
}

func noCheck(Request, kmsg.Request) (kmsg.Response, func(kmsg.Response)) { return nil, nil }

// fillsOperations: see FillsOperations.
var fillsOperations = map[int16]bool{3: true, 15: true, 60: true}

// --- topics -------------------------------------------------------------

// TopicAllowed is op on a topic, as a predicate on its name.
func TopicAllowed(rc Request, op auth.Operation) func(string) bool {
	return func(name string) bool { return rc.Allowed(op, auth.ResourceTopic, name) }
}

// authzProduce: WRITE on the transactional id (if any) and on each topic.
// Produce never creates a topic (only Metadata auto-creates, as in Kafka
// 4): a missing one is UNKNOWN_TOPIC_OR_PARTITION from the handler.
func authzProduce(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ProduceRequest)
	txnRefused := r.TransactionID != nil && !rc.Allowed(auth.OpWrite, auth.ResourceTransactionalID, *r.TransactionID)
	codes := map[string]int16{}
	refused := filterOut(&r.Topics, func(t *kmsg.ProduceRequestTopic) bool {
		switch {
		case txnRefused:
			codes[t.Topic] = kerr.TransactionalIDAuthorizationFailed.Code
		case !rc.Allowed(auth.OpWrite, auth.ResourceTopic, t.Topic):
			codes[t.Topic] = kerr.TopicAuthorizationFailed.Code
		default:
			return true
		}
		return false
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		pr := resp.(*kmsg.ProduceResponse)
		for _, t := range refused {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = p.Partition, codes[t.Topic], -1, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			pr.Topics = append(pr.Topics, rt)
		}
	}
}

func authzListOffsets(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ListOffsetsRequest)
	ok := TopicAllowed(rc, auth.OpDescribe)
	refused := filterOut(&r.Topics, func(t *kmsg.ListOffsetsRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		lr := resp.(*kmsg.ListOffsetsResponse)
		for _, t := range refused {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.Timestamp, rp.Offset = p.Partition, kerr.TopicAuthorizationFailed.Code, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			lr.Topics = append(lr.Topics, rt)
		}
	}
}

func authzOffsetForLeaderEpoch(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetForLeaderEpochRequest)
	ok := TopicAllowed(rc, auth.OpDescribe)
	refused := filterOut(&r.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		or := resp.(*kmsg.OffsetForLeaderEpochResponse)
		for _, t := range refused {
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, kerr.TopicAuthorizationFailed.Code, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			or.Topics = append(or.Topics, rt)
		}
	}
}

func authzDeleteRecords(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteRecordsRequest)
	ok := TopicAllowed(rc, auth.OpDelete)
	refused := filterOut(&r.Topics, func(t *kmsg.DeleteRecordsRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DeleteRecordsResponse)
		for _, t := range refused {
			rt := kmsg.NewDeleteRecordsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDeleteRecordsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LowWatermark = p.Partition, kerr.TopicAuthorizationFailed.Code, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			dr.Topics = append(dr.Topics, rt)
		}
	}
}

func authzDescribeProducers(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeProducersRequest)
	ok := TopicAllowed(rc, auth.OpRead)
	refused := filterOut(&r.Topics, func(t *kmsg.DescribeProducersRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DescribeProducersResponse)
		for _, t := range refused {
			rt := kmsg.NewDescribeProducersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeProducersResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			dr.Topics = append(dr.Topics, rt)
		}
	}
}

func authzCreatePartitions(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.CreatePartitionsRequest)
	ok := TopicAllowed(rc, auth.OpAlter)
	refused := filterOut(&r.Topics, func(t *kmsg.CreatePartitionsRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		cr := resp.(*kmsg.CreatePartitionsResponse)
		for _, t := range refused {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = t.Topic, kerr.TopicAuthorizationFailed.Code
			cr.Topics = append(cr.Topics, rt)
		}
	}
}

// authzCreateTopics: CREATE on the cluster, else on each topic. A created
// topic's configs are returned only with DESCRIBE_CONFIGS on it.
func authzCreateTopics(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.CreateTopicsRequest)
	var refused []kmsg.CreateTopicsRequestTopic
	if !allowedCluster(rc, auth.OpCreate) {
		ok := TopicAllowed(rc, auth.OpCreate)
		refused = filterOut(&r.Topics, func(t *kmsg.CreateTopicsRequestTopic) bool { return ok(t.Topic) })
	}
	return nil, func(resp kmsg.Response) {
		cr := resp.(*kmsg.CreateTopicsResponse)
		for i := range cr.Topics {
			t := &cr.Topics[i]
			if t.ErrorCode == 0 && !rc.Allowed(auth.OpDescribeConfigs, auth.ResourceTopic, t.Topic) {
				t.ConfigErrorCode, t.Configs, t.NumPartitions, t.ReplicationFactor = kerr.TopicAuthorizationFailed.Code, nil, -1, -1
			}
		}
		for _, t := range refused {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor = t.Topic, kerr.TopicAuthorizationFailed.Code, -1, -1
			cr.Topics = append(cr.Topics, rt)
		}
	}
}

// authzDeleteTopics: DELETE on each topic, named or (v6+) by id; a topic
// refused by id is not named in the answer.
func authzDeleteTopics(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteTopicsRequest)
	ok := TopicAllowed(rc, auth.OpDelete)
	refusedNames := filterOut(&r.TopicNames, func(n *string) bool { return ok(*n) })
	refused := filterOut(&r.Topics, func(t *kmsg.DeleteTopicsRequestTopic) bool {
		if t.Topic != nil {
			return ok(*t.Topic)
		}
		name, known := rc.TopicByID(t.TopicID)
		return !known || ok(name) // an unknown id is the handler's answer
	})
	if len(refused)+len(refusedNames) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DeleteTopicsResponse)
		for _, n := range refusedNames {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = &n, kerr.TopicAuthorizationFailed.Code
			dr.Topics = append(dr.Topics, rt)
		}
		for _, t := range refused {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, kerr.TopicAuthorizationFailed.Code
			dr.Topics = append(dr.Topics, rt)
		}
	}
}

// --- configs ------------------------------------------------------------

// Config resource types (DescribeConfigs, AlterConfigs).
const (
	configTopic        = 2
	configBroker       = 4
	configBrokerLogger = 8
)

// configAllowed checks op on a config resource: a topic, or the cluster
// for broker configs; it returns the error code of a refusal.
func configAllowed(rc Request, op auth.Operation, typ kmsg.ConfigResourceType, name string) (bool, int16) {
	if typ == configTopic {
		return rc.Allowed(op, auth.ResourceTopic, name), kerr.TopicAuthorizationFailed.Code
	}
	if typ == kmsg.ConfigResourceTypeGroupConfig {
		return GroupAllowed(rc, op, name), kerr.GroupAuthorizationFailed.Code
	}
	return allowedCluster(rc, op), kerr.ClusterAuthorizationFailed.Code
}

type refusedConfig struct {
	typ  kmsg.ConfigResourceType
	name string
	code int16
}

func filterConfigs[T any](rc Request, op auth.Operation, list *[]T, key func(*T) (kmsg.ConfigResourceType, string)) []refusedConfig {
	var refused []refusedConfig
	filterOut(list, func(e *T) bool {
		typ, name := key(e)
		ok, code := configAllowed(rc, op, typ, name)
		if !ok {
			refused = append(refused, refusedConfig{typ, name, code})
		}
		return ok
	})
	return refused
}

func authzDescribeConfigs(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeConfigsRequest)
	refused := filterConfigs(rc, auth.OpDescribeConfigs, &r.Resources, func(e *kmsg.DescribeConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return e.ResourceType, e.ResourceName
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DescribeConfigsResponse)
		for _, x := range refused {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = x.typ, x.name, x.code
			dr.Resources = append(dr.Resources, rr)
		}
	}
}

func authzAlterConfigs(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.AlterConfigsRequest)
	refused := filterConfigs(rc, auth.OpAlterConfigs, &r.Resources, func(e *kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return e.ResourceType, e.ResourceName
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		ar := resp.(*kmsg.AlterConfigsResponse)
		for _, x := range refused {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = x.typ, x.name, x.code
			ar.Resources = append(ar.Resources, rr)
		}
	}
}

func authzIncrementalAlterConfigs(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.IncrementalAlterConfigsRequest)
	refused := filterConfigs(rc, auth.OpAlterConfigs, &r.Resources, func(e *kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return e.ResourceType, e.ResourceName
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		ar := resp.(*kmsg.IncrementalAlterConfigsResponse)
		for _, x := range refused {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = x.typ, x.name, x.code
			ar.Resources = append(ar.Resources, rr)
		}
	}
}

// --- cluster ------------------------------------------------------------

func authzDescribeScram(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if allowedCluster(rc, auth.OpDescribe) {
		return nil, nil
	}
	resp := req.(*kmsg.DescribeUserSCRAMCredentialsRequest).ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	return resp, nil
}

// authzDescribeClientQuotas: DESCRIBE_CONFIGS on the cluster.
func authzDescribeClientQuotas(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if allowedCluster(rc, auth.OpDescribeConfigs) {
		return nil, nil
	}
	resp := req.(*kmsg.DescribeClientQuotasRequest).ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	resp.ErrorMessage = kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Message)
	return resp, nil
}

// authzAlterClientQuotas: ALTER_CONFIGS on the cluster; refused, every
// entry is CLUSTER_AUTHORIZATION_FAILED.
func authzAlterClientQuotas(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if allowedCluster(rc, auth.OpAlterConfigs) {
		return nil, nil
	}
	r := req.(*kmsg.AlterClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, en := range r.Entries {
		e := kmsg.NewAlterClientQuotasResponseEntry()
		e.ErrorCode, e.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Message)
		for _, c := range en.Entity {
			ec := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ec.Type, ec.Name = c.Type, c.Name
			e.Entity = append(e.Entity, ec)
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}

func authzAlterScram(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if allowedCluster(rc, auth.OpAlter) {
		return nil, nil
	}
	r := req.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	seen := map[string]bool{}
	add := func(user string) {
		if !seen[user] {
			seen[user] = true
			res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			res.User, res.ErrorCode = user, kerr.ClusterAuthorizationFailed.Code
			resp.Results = append(resp.Results, res)
		}
	}
	for _, d := range r.Deletions {
		add(d.Name)
	}
	for _, u := range r.Upsertions {
		add(u.Name)
	}
	return resp, nil
}

// authzInitProducerID: WRITE on the transactional id; without one
// (idempotence), IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
func authzInitProducerID(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.InitProducerIDRequest)
	var code int16
	switch {
	case r.TransactionalID != nil:
		if !rc.Allowed(auth.OpWrite, auth.ResourceTransactionalID, *r.TransactionalID) {
			code = kerr.TransactionalIDAuthorizationFailed.Code
		}
	case !allowedCluster(rc, auth.OpIdempotentWrite) &&
		!rc.AnyTopicWrite():
		code = kerr.ClusterAuthorizationFailed.Code
	}
	if code == 0 {
		return nil, nil
	}
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
	return resp, nil
}

func authzDescribeCluster(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	return nil, fillClusterOps(rc, req.(*kmsg.DescribeClusterRequest).IncludeClusterAuthorizedOperations)
}

// fillClusterOps sets DescribeCluster's cluster_authorized_operations when
// asked: 0 without DESCRIBE on the cluster, as Kafka.
func fillClusterOps(rc Request, asked bool) func(kmsg.Response) {
	if !asked {
		return nil
	}
	return func(resp kmsg.Response) {
		dr := resp.(*kmsg.DescribeClusterResponse)
		if dr.ErrorCode == 0 {
			dr.ClusterAuthorizedOperations = clusterOps(rc)
		}
	}
}

func clusterOps(rc Request) int32 {
	if !allowedCluster(rc, auth.OpDescribe) {
		return 0
	}
	return rc.Operations(auth.ResourceCluster, auth.ClusterName)
}
