package authz

// Authorization of the share-group APIs (per-API authorization), as Kafka's KafkaApis: READ
// on the group for membership, fetch, acknowledgement and altering
// offsets, DESCRIBE for describing, DELETE for deleting offsets. Topics
// are checked per partition in the handlers (READ for ShareFetch and
// altering, DESCRIBE for describing offsets); ShareGroupHeartbeat needs
// DESCRIBE on every subscribed topic.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	authzRules[76] = authzShareGroupHeartbeat
	authzRules[77] = authzShareGroupDescribe
	authzRules[78] = authzShareTop(auth.OpRead, func(r kmsg.Request) string { return deref(r.(*kmsg.ShareFetchRequest).GroupID) })
	authzRules[79] = authzShareTop(auth.OpRead, func(r kmsg.Request) string { return deref(r.(*kmsg.ShareAcknowledgeRequest).GroupID) })
	authzRules[90] = authzDescribeShareGroupOffsets
	authzRules[91] = authzShareTop(auth.OpRead, func(r kmsg.Request) string { return r.(*kmsg.AlterShareGroupOffsetsRequest).GroupID })
	authzRules[92] = authzShareTop(auth.OpDelete, func(r kmsg.Request) string { return r.(*kmsg.DeleteShareGroupOffsetsRequest).GroupID })
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// authzShareTop: op on the group, else GROUP_AUTHORIZATION_FAILED as the
// response's top-level error.
func authzShareTop(op auth.Operation, groupOf func(kmsg.Request) string) Rule {
	return func(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
		if GroupAllowed(rc, op, groupOf(req)) {
			return nil, nil
		}
		code := kerr.GroupAuthorizationFailed.Code
		switch resp := req.ResponseKind().(type) {
		case *kmsg.ShareFetchResponse:
			resp.ErrorCode = code
			return resp, nil
		case *kmsg.ShareAcknowledgeResponse:
			resp.ErrorCode = code
			return resp, nil
		case *kmsg.AlterShareGroupOffsetsResponse:
			resp.ErrorCode = code
			return resp, nil
		case *kmsg.DeleteShareGroupOffsetsResponse:
			resp.ErrorCode = code
			return resp, nil
		}
		panic("authzShareTop: not a share request")
	}
}

// authzShareGroupHeartbeat: READ on the group, DESCRIBE on each
// subscribed topic.
func authzShareGroupHeartbeat(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.ShareGroupHeartbeatRequest)
	resp := r.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	if resp.ErrorCode = heartbeatRefusal(rc, r.GroupID, r.SubscribedTopicNames); resp.ErrorCode != 0 {
		return resp, nil
	}
	return nil, nil
}

// authzShareGroupDescribe: DESCRIBE on each group, and, as
// ConsumerGroupDescribe (and Kafka's KafkaApis), on every topic its
// members subscribe to or are assigned: a group with a topic the
// principal may not describe is TOPIC_AUTHORIZATION_FAILED, with
// nothing of it described.
func authzShareGroupDescribe(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if !rc.Authorizing() {
		return nil, nil
	}
	r := req.(*kmsg.ShareGroupDescribeRequest)
	refused := filterOut(&r.GroupIDs, func(g *string) bool { return GroupAllowed(rc, auth.OpDescribe, *g) })
	topicOK := TopicAllowed(rc, auth.OpDescribe)
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.ShareGroupDescribeResponse)
		for i := range dr.Groups {
			g := &dr.Groups[i]
			if g.ErrorCode == 0 && !shareDescribedTopicsAllowed(g, topicOK) {
				g.ErrorCode, g.Members = kerr.TopicAuthorizationFailed.Code, nil
				g.GroupState, g.GroupEpoch, g.AssignmentEpoch, g.Assignor = "", 0, 0, ""
				g.AuthorizedOperations = OperationsNotRequested
			}
		}
		for _, g := range refused {
			dg := kmsg.NewShareGroupDescribeResponseGroup()
			dg.GroupID, dg.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			dr.Groups = append(dr.Groups, dg)
		}
	}
}

func shareDescribedTopicsAllowed(g *kmsg.ShareGroupDescribeResponseGroup, ok func(string) bool) bool {
	for _, m := range g.Members {
		for _, t := range m.SubscribedTopicNames {
			if !ok(t) {
				return false
			}
		}
		for _, t := range m.Assignment.TopicPartitions {
			if t.Topic != "" && !ok(t.Topic) {
				return false
			}
		}
	}
	return true
}

// authzDescribeShareGroupOffsets: DESCRIBE on each group.
func authzDescribeShareGroupOffsets(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.DescribeShareGroupOffsetsRequest)
	refused := filterOut(&r.Groups, func(g *kmsg.DescribeShareGroupOffsetsRequestGroup) bool {
		return GroupAllowed(rc, auth.OpDescribe, g.GroupID)
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.DescribeShareGroupOffsetsResponse)
		for _, g := range refused {
			dg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			dg.GroupID, dg.ErrorCode = g.GroupID, kerr.GroupAuthorizationFailed.Code
			dr.Groups = append(dr.Groups, dg)
		}
	}
}
