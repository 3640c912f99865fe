package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The share-group APIs' ACLs (A11), as Kafka's: READ on the group for
// membership and fetching, then DESCRIBE on subscribed topics and READ on
// fetched ones; DESCRIBE on the group to describe it and its offsets,
// DELETE to delete offsets, DESCRIBE_CONFIGS for its configs.
func TestShareGroupACLs(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("sh-1")
	alice := a.client("alice")
	id := aclTopicID(t, a, "sh-1")
	heartbeat := func(t *testing.T, cl *kgo.Client) int16 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.SubscribedTopicNames = "g-sh", "alice-member-0000000001", []string{"sh-1"}
		return seedRequest[*kmsg.ShareGroupHeartbeatResponse](t, cl, req).ErrorCode
	}
	fetch := func(t *testing.T, cl *kgo.Client) (top, part int16) {
		req := kmsg.NewPtrShareFetchRequest()
		g, m := "g-sh", "alice-member-0000000001"
		req.GroupID, req.MemberID, req.MaxRecords = &g, &m, 10
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
		req.Topics = []kmsg.ShareFetchRequestTopic{rt}
		resp := seedRequest[*kmsg.ShareFetchResponse](t, cl, req)
		if len(resp.Topics) == 0 {
			return resp.ErrorCode, 0
		}
		return resp.ErrorCode, resp.Topics[0].Partitions[0].ErrorCode
	}
	describe := func(t *testing.T, cl *kgo.Client) int16 {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{"g-sh"}
		return seedRequest[*kmsg.ShareGroupDescribeResponse](t, cl, req).Groups[0].ErrorCode
	}
	deleteOffsets := func(t *testing.T, cl *kgo.Client) int16 {
		req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		req.GroupID = "g-sh"
		return seedRequest[*kmsg.DeleteShareGroupOffsetsResponse](t, cl, req).ErrorCode
	}
	expect := func(what string, got int16, want *kerr.Error) {
		t.Helper()
		if (want == nil && got != 0) || (want != nil && got != want.Code) {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
		}
	}

	expect("heartbeat without group READ", heartbeat(t, alice), kerr.GroupAuthorizationFailed)
	top, _ := fetch(t, alice)
	expect("share fetch without group READ", top, kerr.GroupAuthorizationFailed)
	expect("describe without group DESCRIBE", describe(t, alice), kerr.GroupAuthorizationFailed)
	expect("group configs without DESCRIBE_CONFIGS", describeConfigsCode(t, alice, kmsg.ConfigResourceTypeGroupConfig, "g-sh"), kerr.GroupAuthorizationFailed)

	a.grant(allowAlice().Groups("g-sh").Operations(kadm.OpRead))
	expect("heartbeat without topic DESCRIBE", heartbeat(t, alice), kerr.TopicAuthorizationFailed)
	a.grant(allowAlice().Topics("sh-1").Operations(kadm.OpDescribe))
	expect("heartbeat with group READ and topic DESCRIBE", heartbeat(t, alice), nil)
	top, part := fetch(t, alice)
	expect("share fetch with group READ", top, nil)
	expect("share fetch of a topic without READ", part, kerr.TopicAuthorizationFailed)
	a.grant(allowAlice().Topics("sh-1").Operations(kadm.OpRead))
	_, part = fetch(t, alice)
	expect("share fetch with topic READ", part, nil)
	expect("describe with group READ (implies DESCRIBE)", describe(t, alice), nil)
	expect("delete offsets without group DELETE", deleteOffsets(t, alice), kerr.GroupAuthorizationFailed)
	a.grant(allowAlice().Groups("g-sh").Operations(kadm.OpDescribeConfigs))
	expect("group configs with DESCRIBE_CONFIGS", describeConfigsCode(t, alice, kmsg.ConfigResourceTypeGroupConfig, "g-sh"), nil)
}
