package authz

// Authorization of the streams group APIs (KIP-1071), as Kafka's
// KafkaApis: READ on the group for a heartbeat, DESCRIBE on every topic
// a joining member's topology names, CREATE for the internal topics the
// broker creates (88_streams_group_heartbeat.go); DESCRIBE on the group
// and on its topology's topics to describe it; READ on the group to push
// its topology description (KIP-1331).

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsTopologyTopics are every topic a heartbeat's topology names.
func streamsTopologyTopics(t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, st := range t.Subtopologies {
		out = append(out, st.SourceTopics...)
		out = append(out, st.RepartitionSinkTopics...)
		for _, ti := range st.RepartitionSourceTopics {
			out = append(out, ti.Topic)
		}
		for _, ti := range st.StateChangelogTopics {
			out = append(out, ti.Topic)
		}
	}
	return out
}

// authzStreamsGroupHeartbeat: READ on the group
// (GROUP_AUTHORIZATION_FAILED), then DESCRIBE on every topic of the
// topology (TOPIC_AUTHORIZATION_FAILED).
func authzStreamsGroupHeartbeat(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.StreamsGroupHeartbeatRequest)
	resp := r.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode = heartbeatRefusal(rc, r.Group, streamsTopologyTopics(r.Topology)); resp.ErrorCode != 0 {
		return resp, nil
	}
	return nil, nil
}

// authzStreamsGroupTopologyDescriptionUpdate: READ on the group
// (GROUP_AUTHORIZATION_FAILED), as Kafka (KIP-1331: like an offset
// commit, a topology description push does not modify the group).
func authzStreamsGroupTopologyDescriptionUpdate(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.StreamsGroupTopologyDescriptionUpdateRequest)
	if GroupAllowed(rc, auth.OpRead, r.Group) {
		return nil, nil
	}
	resp := r.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
	return resp, nil
}

// authzStreamsGroupDescribe: DESCRIBE on each group; a group whose
// topology names a topic the principal may not describe is
// TOPIC_AUTHORIZATION_FAILED; authorized_operations when asked.
func authzStreamsGroupDescribe(rc Request, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r := req.(*kmsg.StreamsGroupDescribeRequest)
	refused := filterOut(&r.Groups, func(g *string) bool { return GroupAllowed(rc, auth.OpDescribe, *g) })
	asked := r.IncludeAuthorizedOperations
	topicOK := TopicAllowed(rc, auth.OpDescribe)
	return nil, func(resp kmsg.Response) {
		dr := resp.(*kmsg.StreamsGroupDescribeResponse)
		for i := range dr.Groups {
			g := &dr.Groups[i]
			if g.ErrorCode == 0 && !streamsTopicsAllowed(g, topicOK) {
				*g = kmsg.NewStreamsGroupDescribeResponseGroup()
				g.Group, g.ErrorCode = dr.Groups[i].Group, kerr.TopicAuthorizationFailed.Code
			}
			if asked && g.ErrorCode == 0 {
				g.AuthorizedOperations = rc.Operations(auth.ResourceGroup, g.Group)
			}
		}
		for _, id := range refused {
			rg := kmsg.NewStreamsGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = id, kerr.GroupAuthorizationFailed.Code
			dr.Groups = append(dr.Groups, rg)
		}
	}
}

func streamsTopicsAllowed(g *kmsg.StreamsGroupDescribeResponseGroup, ok func(string) bool) bool {
	if g.Topology == nil {
		return true
	}
	for _, st := range g.Topology.Subtopologies {
		names := append(append([]string{}, st.SourceTopics...), st.RepartitionSinkTopics...)
		for _, ti := range append(append([]kmsg.TopicInfo{}, st.RepartitionSourceTopics...), st.StateChangelogTopics...) {
			names = append(names, ti.Topic)
		}
		for _, n := range names {
			if !ok(n) {
				return false
			}
		}
	}
	return true
}
