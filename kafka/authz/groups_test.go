package authz

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Per-API authorization for the consumer protocol: ConsumerGroupHeartbeat needs READ on the
// group and DESCRIBE on each topic subscribed by name; ConsumerGroupDescribe DESCRIBE on the group and on every topic
// its members subscribe to or are assigned.
func TestConsumerGroupAuthzRules(t *testing.T) {
	beat := func(rc Request) int16 {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group = "g"
		resp, _ := authzConsumerGroupHeartbeat(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode
	}
	// subscribing by name needs DESCRIBE on the topic, as Kafka's
	// KafkaApis.consumerGroupHeartbeat.
	subscribe := func(rc Request) int16 {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.SubscribedTopicNames = "g", []string{"t"}
		resp, _ := authzConsumerGroupHeartbeat(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode
	}
	describe := func(rc Request) int16 {
		r := kmsg.NewPtrConsumerGroupDescribeRequest()
		r.Groups = []string{"g"}
		answer, after := authzConsumerGroupDescribe(rc, r)
		if answer != nil {
			t.Fatal("describe answered early")
		}
		resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range r.Groups { // the coordinator's answer for the allowed ones
			dg := kmsg.NewConsumerGroupDescribeResponseGroup()
			dg.Group = g
			m := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			m.SubscribedTopics = []string{"t"}
			dg.Members = append(dg.Members, m)
			resp.Groups = append(resp.Groups, dg)
		}
		after(resp)
		return resp.Groups[0].ErrorCode
	}
	groupRead := acl(auth.ResourceGroup, "g", auth.OpRead)
	groupDescribe := acl(auth.ResourceGroup, "g", auth.OpDescribe)
	topicDescribe := acl(auth.ResourceTopic, "t", auth.OpDescribe)
	for _, tc := range []struct {
		name string
		acls []auth.ACL
		f    func(Request) int16
		want *kerr.Error
	}{
		{"heartbeat without READ", []auth.ACL{groupDescribe}, beat, kerr.GroupAuthorizationFailed},
		{"heartbeat with READ", []auth.ACL{groupRead}, beat, nil},
		{"subscribe by name without topic DESCRIBE", []auth.ACL{groupRead}, subscribe, kerr.TopicAuthorizationFailed},
		{"subscribe by name with topic DESCRIBE", []auth.ACL{groupRead, topicDescribe}, subscribe, nil},
		{"subscribe by name without group READ", []auth.ACL{topicDescribe}, subscribe, kerr.GroupAuthorizationFailed},
		{"describe without group DESCRIBE", []auth.ACL{topicDescribe}, describe, kerr.GroupAuthorizationFailed},
		{"describe without topic DESCRIBE", []auth.ACL{groupDescribe}, describe, kerr.TopicAuthorizationFailed},
		{"describe with both", []auth.ACL{groupDescribe, topicDescribe}, describe, nil},
	} {
		got := tc.f(authzConn(t, "User:alice", tc.acls...))
		want := int16(0)
		if tc.want != nil {
			want = tc.want.Code
		}
		if got != want {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(got), tc.want)
		}
	}
}
