package kafka

import (
	"slices"
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/streams"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The streams group APIs' rules, as Kafka's KafkaApis: a heartbeat needs
// READ on the group and DESCRIBE on every topic its topology names; a
// describe DESCRIBE on the group and on its topology's topics; internal
// topics are created only with CREATE on the cluster or the topic.
func TestStreamsGroupAuthzRules(t *testing.T) {
	beat := func(rc *reqCtx) int16 {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group = "g"
		tp := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = "0", []string{"t"}
		st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "cl"}}
		tp.Subtopologies = append(tp.Subtopologies, st)
		r.Topology = &tp
		resp, _ := rule(88)(rc, r)
		if resp == nil {
			return 0
		}
		return resp.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode
	}
	describe := func(rc *reqCtx) int16 {
		r := kmsg.NewPtrStreamsGroupDescribeRequest()
		r.Groups = []string{"g"}
		answer, after := rule(89)(rc, r)
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
		f    func(*reqCtx) int16
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

	// CREATE on one internal topic only: that one is created (compacted,
	// a changelog), the other reported.
	rc := authzConn(t, "User:alice", acl(auth.ResourceTopic, "app-store-changelog", auth.OpCreate))
	rc.conn.s.cfg.MaxPartitions = DefaultMaxPartitions
	refused := rc.conn.s.createInternalTopics(rc, []streams.InternalTopic{
		{Name: "app-store-changelog", Partitions: 2, Configs: map[string]string{"cleanup.policy": "compact"}, Changelog: true},
		{Name: "app-rep", Partitions: 2, Configs: map[string]string{"cleanup.policy": "delete"}},
	})
	if !slices.Equal(refused, []string{"app-rep"}) {
		t.Fatalf("refused %v, want [app-rep]", refused)
	}
	if n, ok := rc.conn.s.res.Partitions("app-store-changelog"); !ok || n != 2 {
		t.Fatalf("changelog: %d partitions (exists %v)", n, ok)
	}
	if _, ok := rc.conn.s.res.Partitions("app-rep"); ok {
		t.Fatal("app-rep created without CREATE")
	}
	cfgs, err := rc.conn.s.res.TopicConfigs("app-store-changelog")
	if err != nil {
		t.Fatal(err)
	}
	policy := ""
	for _, c := range cfgs {
		if c.Name == "cleanup.policy" {
			policy = c.Value
		}
	}
	if policy != "compact" {
		t.Fatalf("changelog cleanup.policy %q", policy)
	}
}
