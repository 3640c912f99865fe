package authz

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The streams group APIs' rules, as Kafka's KafkaApis: a heartbeat needs
// READ on the group and DESCRIBE on every topic its topology names; a
// describe DESCRIBE on the group and on its topology's topics; internal
// topics are created only with CREATE on the cluster or the topic.
func TestStreamsGroupAuthzRules(t *testing.T) {
	beat := func(rc Request) int16 {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group = "g"
		tp := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = "0", []string{"t"}
		st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "cl"}}
		tp.Subtopologies = append(tp.Subtopologies, st)
		r.Topology = &tp
		resp, _ := authzStreamsGroupHeartbeat(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode
	}
	describe := func(rc Request) int16 {
		r := kmsg.NewPtrStreamsGroupDescribeRequest()
		r.Groups = []string{"g"}
		answer, after := authzStreamsGroupDescribe(rc, r)
		if answer != nil {
			t.Fatal("describe answered early")
		}
		resp := r.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
		for _, g := range r.Groups {
			dg := kmsg.NewStreamsGroupDescribeResponseGroup()
			dg.Group = g
			tp := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
			st := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
			st.SourceTopics = []string{"t"}
			tp.Subtopologies = append(tp.Subtopologies, st)
			dg.Topology = &tp
			resp.Groups = append(resp.Groups, dg)
		}
		after(resp)
		return resp.Groups[0].ErrorCode
	}
	groupRead := acl(auth.ResourceGroup, "g", auth.OpRead)
	groupDescribe := acl(auth.ResourceGroup, "g", auth.OpDescribe)
	topicDescribe := acl(auth.ResourceTopic, "t", auth.OpDescribe)
	clDescribe := acl(auth.ResourceTopic, "cl", auth.OpDescribe)
	for _, tc := range []struct {
		name string
		acls []auth.ACL
		f    func(Request) int16
		want *kerr.Error
	}{
		{"heartbeat without group READ", []auth.ACL{groupDescribe, topicDescribe, clDescribe}, beat, kerr.GroupAuthorizationFailed},
		{"heartbeat without DESCRIBE on the changelog", []auth.ACL{groupRead, topicDescribe}, beat, kerr.TopicAuthorizationFailed},
		{"heartbeat with all", []auth.ACL{groupRead, topicDescribe, clDescribe}, beat, nil},
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
