package kafkadiff

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// caseGroupStreams: the streams group protocol (KIP-1071) against Kafka
// 4.4: validation errors, a join whose topology needs an internal topic
// (created by the broker), the steady heartbeat once the member holds
// every task, fencing, StreamsGroupDescribe, the other group types'
// heartbeats and joins against a streams group and a streams join
// against a consumer group, leave.
func hasStatus(resp *kmsg.StreamsGroupHeartbeatResponse, code int8) bool {
	for _, s := range resp.Status {
		if s.StatusCode == code {
			return true
		}
	}
	return false
}

func caseGroupStreams(r *run) {
	const g, topic, member = "kd-sg", "kd-sg-in", "kd-sg-member-000000"
	r.createTopic(topic, 2)
	r.awaitCoordinator(0, g)
	topology := func(changelogPartitions int32) *kmsg.StreamsGroupHeartbeatRequestTopology {
		t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		t.Epoch = 1
		s := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		s.SubtopologyID, s.SourceTopics = "0", []string{topic}
		cl := kmsg.NewTopicInfo()
		cl.Topic, cl.NumPartitions = "kd-sg-store-changelog", changelogPartitions
		s.StateChangelogTopics = []kmsg.TopicInfo{cl}
		t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s}
		return &t
	}
	hbReq := func(group, id string, epoch int32, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *kmsg.StreamsGroupHeartbeatRequest {
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, id, epoch, -1
		if epoch == 0 {
			req.RebalanceTimeoutMillis, req.Topology, req.ProcessID = 10000, topo, str("kd-sg-process")
			req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "kd-sg-host", Port: 7000}
			req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		}
		return req
	}
	hb := func(name, id string, epoch int32, topo *kmsg.StreamsGroupHeartbeatRequestTopology) *kmsg.StreamsGroupHeartbeatResponse {
		resp, _ := r.do(name, hbReq(g, id, epoch, topo)).(*kmsg.StreamsGroupHeartbeatResponse)
		return resp
	}
	// Kafka 4.4's coordinator fails a join with a user endpoint
	// (UNKNOWN_SERVER_ERROR, a NoSuchElementException in its
	// EndpointToPartitionsManager) while it does not yet see a source
	// topic: a throwaway group without endpoint joins until the topic is
	// seen, unrecorded.
	warm := hbReq("kd-sg-warm", member, 0, topology(0))
	warm.UserEndpoint = nil
	warm.Topology.Subtopologies[0].StateChangelogTopics[0].Topic = "kd-sg-warm-changelog"
	for r.ctx.Err() == nil {
		resp, _ := r.setup(warm).(*kmsg.StreamsGroupHeartbeatResponse)
		if resp == nil || resp.ErrorCode == 0 && !hasStatus(resp, 1) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	missing := hbReq("kd-sg-missing", member, 0, topology(0))
	missing.UserEndpoint = nil
	missing.Topology.Subtopologies[0].SourceTopics = []string{"kd-sg-nothing"}
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if p != "ErrorCode" && !strings.HasPrefix(p, "Status") {
				delete(flat, p)
			}
		}
	}
	r.do("join with a missing source topic", missing)
	r.filter = nil
	hb("heartbeat to an unknown group", member, 3, nil)
	hb("join without member id", "", 0, topology(0))
	hb("join without topology", member, 0, nil)
	hb("join with a changelog partition count", member, 0, topology(4))
	// The first join: the changelog is missing (the broker creates it);
	// the answer's epochs and tasks depend on when each broker's creation
	// lands, so only its status codes and errors are compared.
	r.filter = func(flat map[string]string) {
		for p := range flat {
			switch p {
			case "ErrorCode", "MemberID", "HeartbeatIntervalMillis":
			default:
				if len(p) < 6 || p[:6] != "Status" || p[len(p)-6:] == "Detail" {
					delete(flat, p)
				}
			}
		}
	}
	resp := hb("join", member, 0, topology(0))
	r.filter = nil
	epoch := int32(0)
	if resp != nil {
		epoch = resp.MemberEpoch
		for tasks := 0; tasks < 2; {
			if r.ctx.Err() != nil {
				r.t.Errorf("%s: no assignment of both tasks", r.side.name)
				break
			}
			time.Sleep(50 * time.Millisecond)
			next, _ := r.setup(hbReq(g, member, epoch, nil)).(*kmsg.StreamsGroupHeartbeatResponse)
			if next == nil || next.ErrorCode != 0 {
				break
			}
			epoch = next.MemberEpoch
			if next.ActiveTasks != nil {
				tasks = 0
				for _, t := range next.ActiveTasks {
					tasks += len(t.Partitions)
				}
			}
		}
	}
	hb("heartbeat: epoch too new", member, epoch+7, nil)
	hb("heartbeat: unknown member", "kd-sg-stranger-000000", epoch, nil)
	hb("heartbeat", member, epoch, nil)
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{g, "kd-sg-none"}
	r.do("describe", d)
	cg := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cg.Group, cg.MemberID, cg.RebalanceTimeoutMillis = g, "kd-sg-consumer-000000", 10000
	cg.SubscribedTopicNames, cg.Topics = []string{topic}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	r.do("consumer join of a streams group", cg)
	r.do("classic join of a streams group", joinReq(g, "", 30000))
	// A streams join of a consumer group with a member.
	cg.Group = "kd-sg-cg"
	r.awaitCoordinator(0, cg.Group)
	r.setup(cg)
	resp2, _ := r.do("streams join of a consumer group", hbReq(cg.Group, member, 0, topology(0))).(*kmsg.StreamsGroupHeartbeatResponse)
	_ = resp2
	lg := kmsg.NewPtrListGroupsRequest()
	lg.TypesFilter = []string{"streams"}
	r.do("list streams groups", lg)
	hb("leave", member, -1, nil)
	r.do("describe after leave", d)
}

// caseStreamsDescription: topology descriptions (KIP-1331) against Kafka
// 4.4 with its in-memory description plugin configured (main_test.go):
// the first member is asked for the description, pushes that are refused
// (no group, a non-member), the push, and StreamsGroupDescribe with and
// without the description.
func caseStreamsDescription(r *run) {
	const g, topic, member = "kd-std", "kd-std-in", "kd-std-member-000000"
	r.createTopic(topic, 1)
	r.awaitCoordinator(0, g)
	join := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	join.Group, join.MemberID, join.RebalanceTimeoutMillis, join.ProcessID = g, member, 10000, str("kd-std-process")
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = 1
	s := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s.SubtopologyID, s.SourceTopics = "0", []string{topic}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s}
	join.Topology = &t
	join.ActiveTasks, join.StandbyTasks, join.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	// Kafka's coordinator may not see the new topic at once: the join is
	// repeated (unrecorded) until it is ready, then compared.
	r.await("a ready join", join, func(resp kmsg.Response) bool {
		hb := resp.(*kmsg.StreamsGroupHeartbeatResponse)
		return hb.ErrorCode == 0 && len(hb.Status) == 0
	})
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if p != "ErrorCode" && p != "TopologyDescriptionRequired" {
				delete(flat, p)
			}
		}
	}
	r.do("join: asked for the description", join)
	r.filter = nil
	push := func(name, group, id string) {
		req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		req.Group, req.MemberID, req.TopologyEpoch = group, id, 1
		src := kmsg.NewTopologyDescriptionNode()
		src.Name, src.NodeType, src.SourceTopics, src.Successors = "KSTREAM-SOURCE-0000000000", 1, []string{topic}, []string{"KSTREAM-SINK-0000000001"}
		sink := kmsg.NewTopologyDescriptionNode()
		sink.Name, sink.NodeType, sink.SinkTopic = "KSTREAM-SINK-0000000001", 3, str("kd-std-out")
		st := kmsg.NewTopologyDescriptionSubtopology()
		st.SubtopologyID, st.Nodes = "0", []kmsg.TopologyDescriptionNode{src, sink}
		req.TopologyDescription.Subtopologies = []kmsg.TopologyDescriptionSubtopology{st}
		r.do(name, req)
	}
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups, d.IncludeTopologyDescription = []string{g}, true
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if !strings.Contains(p, "TopologyDescription") && !strings.HasSuffix(p, "ErrorCode") {
				delete(flat, p)
			}
		}
	}
	r.do("describe before the push", d)
	r.filter = nil
	push("push to no group", "kd-std-none", member)
	push("push from a non-member", g, "kd-std-stranger-00000")
	push("push", g, member)
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if !strings.Contains(p, "TopologyDescription") && !strings.HasSuffix(p, "ErrorCode") {
				delete(flat, p)
			}
		}
	}
	r.do("describe with the description", d)
	d.IncludeTopologyDescription = false
	r.do("describe without it", d)
	r.filter = nil
}
