package authz

// Authorization rules of the group and transaction APIs (per-API authorization).

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupAllowed is op on the group.
func GroupAllowed(rc Request, op auth.Operation, group string) bool {
	return rc.Allowed(op, auth.ResourceGroup, group)
}

func txnAllowed(rc Request, id string) bool {
	return rc.Allowed(auth.OpWrite, auth.ResourceTransactionalID, id)
}

// authzGroupError: READ on the group, else the response's error code
// (JoinGroup, Heartbeat, LeaveGroup, SyncGroup).
func authzGroupError(groupOf func(kmsg.Request) string) Rule {
	return func(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
		if GroupAllowed(rc, auth.OpRead, groupOf(req)) {
			return nil, nil
		}
		code := kerr.GroupAuthorizationFailed.Code
		switch resp := req.ResponseKind().(type) {
		case *kmsg.JoinGroupResponse:
			resp.ErrorCode, resp.Generation = code, -1
			return resp, nil
		case *kmsg.HeartbeatResponse:
			resp.ErrorCode = code
			return resp, nil
		case *kmsg.LeaveGroupResponse:
			resp.ErrorCode = code
			return resp, nil
		case *kmsg.SyncGroupResponse:
			resp.ErrorCode = code
			return resp, nil
		}
		panic("authzGroupError: not a group request")
	}
}

// OffsetCommitErrors answers every partition of topics with code (a
// refused group, or a request routed nowhere).
func OffsetCommitErrors(topics []kmsg.OffsetCommitRequestTopic, code int16) []kmsg.OffsetCommitResponseTopic {
	out := make([]kmsg.OffsetCommitResponseTopic, 0, len(topics))
	for _, t := range topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

// authzOffsetCommit: READ on the group, then READ on each topic.
func authzOffsetCommit(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetCommitRequest)
	if !GroupAllowed(rc, auth.OpRead, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = OffsetCommitErrors(r.Topics, kerr.GroupAuthorizationFailed.Code)
		return resp, nil
	}
	ok := TopicAllowed(rc, auth.OpRead)
	refused := filterOut(&r.Topics, func(t *kmsg.OffsetCommitRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	if len(r.Topics) == 0 {
		// Nothing left to commit: answered here, as Kafka does, so
		// that the coordinator does not create the group for an
		// empty commit.
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = OffsetCommitErrors(refused, kerr.TopicAuthorizationFailed.Code)
		return resp, nil
	}
	return nil, func(resp kmsg.Response) {
		cr := resp.(*kmsg.OffsetCommitResponse)
		cr.Topics = append(cr.Topics, OffsetCommitErrors(refused, kerr.TopicAuthorizationFailed.Code)...)
	}
}

// authzOffsetFetch: DESCRIBE on the group; of the named topics, DESCRIBE
// on each (TOPIC_AUTHORIZATION_FAILED); of all topics (none named), only
// those the principal may describe.
func authzOffsetFetch(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetFetchRequest)
	if r.Version >= 8 {
		return authzOffsetFetchGroups(rc, r)
	}
	if !GroupAllowed(rc, auth.OpDescribe, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, OffsetFetchErrors(t.Topic, t.Partitions, kerr.GroupAuthorizationFailed.Code))
		}
		return resp, nil
	}
	ok := TopicAllowed(rc, auth.OpDescribe)
	if r.Topics == nil {
		return nil, func(resp kmsg.Response) {
			fr := resp.(*kmsg.OffsetFetchResponse)
			filterOut(&fr.Topics, func(t *kmsg.OffsetFetchResponseTopic) bool { return ok(t.Topic) })
		}
	}
	refused := filterOut(&r.Topics, func(t *kmsg.OffsetFetchRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		fr := resp.(*kmsg.OffsetFetchResponse)
		for _, t := range refused {
			fr.Topics = append(fr.Topics, OffsetFetchErrors(t.Topic, t.Partitions, kerr.TopicAuthorizationFailed.Code))
		}
	}
}

// OffsetFetchErrors answers every partition of one topic with code.
func OffsetFetchErrors(topic string, partitions []int32, code int16) kmsg.OffsetFetchResponseTopic {
	rt := kmsg.NewOffsetFetchResponseTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewOffsetFetchResponseTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, code
		rp.Metadata = kmsg.StringPtr("") // Kafka's NO_METADATA, not null
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// authzOffsetFetchGroups is authzOffsetFetch for v8+ (several groups).
func authzOffsetFetchGroups(rc Request, r *kmsg.OffsetFetchRequest) (kmsg.Response, func(kmsg.Response)) {
	ok := TopicAllowed(rc, auth.OpDescribe)
	refusedGroups := filterOut(&r.Groups, func(g *kmsg.OffsetFetchRequestGroup) bool {
		return GroupAllowed(rc, auth.OpDescribe, g.Group)
	})
	refusedTopics := map[string][]kmsg.OffsetFetchRequestGroupTopic{}
	allTopics := map[string]bool{}
	for i := range r.Groups {
		g := &r.Groups[i]
		if g.Topics == nil {
			allTopics[g.Group] = true
			continue
		}
		if t := filterOut(&g.Topics, func(t *kmsg.OffsetFetchRequestGroupTopic) bool { return ok(t.Topic) }); len(t) > 0 {
			refusedTopics[g.Group] = t
		}
	}
	return nil, func(resp kmsg.Response) {
		fr := resp.(*kmsg.OffsetFetchResponse)
		for i := range fr.Groups {
			g := &fr.Groups[i]
			if allTopics[g.Group] {
				filterOut(&g.Topics, func(t *kmsg.OffsetFetchResponseGroupTopic) bool { return ok(t.Topic) })
			}
			for _, t := range refusedTopics[g.Group] {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, kerr.TopicAuthorizationFailed.Code
					rp.Metadata = kmsg.StringPtr("") // Kafka's NO_METADATA, not null
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
		}
		for _, g := range refusedGroups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
			fr.Groups = append(fr.Groups, rg)
		}
	}
}

// Coordinator types of FindCoordinator.
const (
	CoordinatorGroup = 0
	CoordinatorTxn   = 1
	CoordinatorShare = 2 // v6+ (KIP-932): a share partition's state
)

// authzFindCoordinator: DESCRIBE on the group or transactional id;
// CLUSTER_ACTION on the cluster for share-state keys (v6+), which only
// brokers look up.
func authzFindCoordinator(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.FindCoordinatorRequest)
	if r.Version >= 6 && r.CoordinatorType == CoordinatorShare {
		if allowedCluster(rc, auth.OpClusterAction) {
			return nil, nil
		}
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		for _, k := range r.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.Port, c.ErrorCode = k, -1, -1, kerr.ClusterAuthorizationFailed.Code
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp, nil
	}
	rt, code := auth.ResourceGroup, kerr.GroupAuthorizationFailed.Code
	if r.CoordinatorType == CoordinatorTxn {
		rt, code = auth.ResourceTransactionalID, kerr.TransactionalIDAuthorizationFailed.Code
	}
	ok := func(key string) bool { return rc.Allowed(auth.OpDescribe, rt, key) }
	if r.Version < 4 {
		if ok(r.CoordinatorKey) {
			return nil, nil
		}
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
		return resp, nil
	}
	refused := filterOut(&r.CoordinatorKeys, func(k *string) bool { return ok(*k) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		fr := resp.(*kmsg.FindCoordinatorResponse)
		for _, k := range refused {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.Port, c.ErrorCode = k, -1, -1, code
			fr.Coordinators = append(fr.Coordinators, c)
		}
	}
}

// authzDescribeGroups: DESCRIBE on each group; authorized_operations
// when asked.
func authzDescribeGroups(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeGroupsRequest)
	refused := filterOut(&r.Groups, func(g *string) bool { return GroupAllowed(rc, auth.OpDescribe, *g) })
	asked := r.IncludeAuthorizedOperations
	if len(refused) == 0 && !asked {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DescribeGroupsResponse)
		if asked {
			for i := range dr.Groups {
				if g := &dr.Groups[i]; g.ErrorCode == 0 {
					g.AuthorizedOperations = rc.Operations(auth.ResourceGroup, g.Group)
				}
			}
		}
		for _, g := range refused {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			rg.AuthorizedOperations = OperationsNotRequested
			dr.Groups = append(dr.Groups, rg)
		}
	}
}

// authzListGroups: every group with DESCRIBE on the cluster, else those
// the principal may describe.
func authzListGroups(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if allowedCluster(rc, auth.OpDescribe) {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		lr := resp.(*kmsg.ListGroupsResponse)
		filterOut(&lr.Groups, func(g *kmsg.ListGroupsResponseGroup) bool {
			return GroupAllowed(rc, auth.OpDescribe, g.Group)
		})
	}
}

func authzDeleteGroups(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DeleteGroupsRequest)
	refused := filterOut(&r.Groups, func(g *string) bool { return GroupAllowed(rc, auth.OpDelete, *g) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DeleteGroupsResponse)
		for _, g := range refused {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			dr.Groups = append(dr.Groups, rg)
		}
	}
}

// authzOffsetDelete: DELETE on the group, then READ on each topic.
func authzOffsetDelete(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.OffsetDeleteRequest)
	if !GroupAllowed(rc, auth.OpDelete, r.Group) {
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	ok := TopicAllowed(rc, auth.OpRead)
	refused := filterOut(&r.Topics, func(t *kmsg.OffsetDeleteRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.OffsetDeleteResponse)
		for _, t := range refused {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			dr.Topics = append(dr.Topics, rt)
		}
	}
}

// --- transactions -------------------------------------------------------

// authzAddPartitionsToTxn: WRITE on the transactional id and on every
// topic; with any topic refused nothing is added (the others get
// OPERATION_NOT_ATTEMPTED). v4+ (broker to broker) needs CLUSTER_ACTION.
func authzAddPartitionsToTxn(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.AddPartitionsToTxnRequest)
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if r.Version >= 4 {
		if allowedCluster(rc, auth.OpClusterAction) {
			return nil, nil
		}
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	txnOK := txnAllowed(rc, r.TransactionalID)
	anyRefused := false
	codes := make([]int16, len(r.Topics))
	for i, t := range r.Topics {
		switch {
		case !txnOK:
			codes[i] = kerr.TransactionalIDAuthorizationFailed.Code
		case !rc.Allowed(auth.OpWrite, auth.ResourceTopic, t.Topic):
			codes[i], anyRefused = kerr.TopicAuthorizationFailed.Code, true
		default:
			codes[i] = kerr.OperationNotAttempted.Code
		}
	}
	if txnOK && !anyRefused {
		return nil, nil
	}
	for i, t := range r.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[i]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// authzAddOffsetsToTxn: WRITE on the transactional id, READ on the group.
func authzAddOffsetsToTxn(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.AddOffsetsToTxnRequest)
	resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	switch {
	case !txnAllowed(rc, r.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	case !GroupAllowed(rc, auth.OpRead, r.Group):
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	default:
		return nil, nil
	}
	return resp, nil
}

// authzEndTxn: WRITE on the transactional id.
func authzEndTxn(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.EndTxnRequest)
	if txnAllowed(rc, r.TransactionalID) {
		return nil, nil
	}
	resp := r.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = kerr.TransactionalIDAuthorizationFailed.Code, -1, -1
	return resp, nil
}

// authzTxnOffsetCommit: WRITE on the transactional id, READ on the group,
// then READ on each topic.
func authzTxnOffsetCommit(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.TxnOffsetCommitRequest)
	code := int16(0)
	switch {
	case !txnAllowed(rc, r.TransactionalID):
		code = kerr.TransactionalIDAuthorizationFailed.Code
	case !GroupAllowed(rc, auth.OpRead, r.Group):
		code = kerr.GroupAuthorizationFailed.Code
	}
	if code != 0 {
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = TxnCommitErrors(r.Topics, code)
		return resp, nil
	}
	ok := TopicAllowed(rc, auth.OpRead)
	refused := filterOut(&r.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) bool { return ok(t.Topic) })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		tr := resp.(*kmsg.TxnOffsetCommitResponse)
		tr.Topics = append(tr.Topics, TxnCommitErrors(refused, kerr.TopicAuthorizationFailed.Code)...)
	}
}

// TxnCommitErrors answers every partition of topics with code.
func TxnCommitErrors(topics []kmsg.TxnOffsetCommitRequestTopic, code int16) []kmsg.TxnOffsetCommitResponseTopic {
	out := make([]kmsg.TxnOffsetCommitResponseTopic, 0, len(topics))
	for _, t := range topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

// authzConsumerGroupHeartbeat: READ on the group, then, as Kafka's
// KafkaApis, DESCRIBE on every subscribed topic name, else
// TOPIC_AUTHORIZATION_FAILED (the member would otherwise learn the
// topic's id and partitions from its assignment). A regex's matches are
// filtered by the coordinator per member instead (server-side regex subscriptions,
// Config.MayDescribe).
func authzConsumerGroupHeartbeat(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ConsumerGroupHeartbeatRequest)
	resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	if resp.ErrorCode = heartbeatRefusal(rc, r.Group, r.SubscribedTopicNames); resp.ErrorCode != 0 {
		return resp, nil
	}
	return nil, nil
}

// heartbeatRefusal is a group heartbeat's authorization: READ on the
// group, then DESCRIBE on every topic subscribed by name; the error code
// of the first refusal, 0 when allowed.
func heartbeatRefusal(rc Request, group string, topics []string) int16 {
	if !GroupAllowed(rc, auth.OpRead, group) {
		return kerr.GroupAuthorizationFailed.Code
	}
	ok := TopicAllowed(rc, auth.OpDescribe)
	for _, t := range topics {
		if !ok(t) {
			return kerr.TopicAuthorizationFailed.Code
		}
	}
	return 0
}

// authzConsumerGroupDescribe: DESCRIBE on each group, and, as Kafka, on
// every topic its members subscribe to or are assigned: a group with a
// topic the principal may not describe is TOPIC_AUTHORIZATION_FAILED.
// authorized_operations when asked.
func authzConsumerGroupDescribe(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ConsumerGroupDescribeRequest)
	refused := filterOut(&r.Groups, func(g *string) bool { return GroupAllowed(rc, auth.OpDescribe, *g) })
	asked := r.IncludeAuthorizedOperations
	topicOK := TopicAllowed(rc, auth.OpDescribe)
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.ConsumerGroupDescribeResponse)
		for i := range dr.Groups {
			g := &dr.Groups[i]
			if g.ErrorCode == 0 && !describedTopicsAllowed(g, topicOK) {
				g.ErrorCode, g.Members = kerr.TopicAuthorizationFailed.Code, nil
				g.State, g.Epoch, g.AssignmentEpoch, g.AssignorName = "", 0, 0, ""
			}
			if asked && g.ErrorCode == 0 {
				g.AuthorizedOperations = rc.Operations(auth.ResourceGroup, g.Group)
			}
		}
		for _, id := range refused {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
			dr.Groups = append(dr.Groups, rg)
		}
	}
}

func describedTopicsAllowed(g *kmsg.ConsumerGroupDescribeResponseGroup, ok func(string) bool) bool {
	for _, m := range g.Members {
		for _, t := range m.SubscribedTopics {
			if !ok(t) {
				return false
			}
		}
		for _, a := range [][]kmsg.AssignmentTopicPartition{m.Assignment.TopicPartitions, m.TargetAssignment.TopicPartitions} {
			for _, t := range a {
				if t.Topic != "" && !ok(t.Topic) {
					return false
				}
			}
		}
	}
	return true
}
