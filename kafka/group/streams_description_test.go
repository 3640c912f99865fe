package group

import (
	"testing"

	"github.com/kgateway/kgateway/kafka/streams"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsJoin joins member m to group with a one-subtopology topology
// at epoch 1 and fails the test on an error answer.
func (h *harness) streamsJoin(group, m string) {
	h.t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.RebalanceTimeoutMillis, req.ProcessID = group, m, 1000, kmsg.StringPtr("p-"+m)
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topo.Epoch = 1
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"in"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	if resp, _ := h.c.StreamsGroupHeartbeat(Client{}, req); resp.ErrorCode != 0 {
		h.t.Fatalf("join %s: %v", group, kerr.ErrorForCode(resp.ErrorCode))
	}
}

// nodesDescription is a one-subtopology description of n processors.
func nodesDescription(n int) kmsg.TopologyDescription {
	st := kmsg.NewTopologyDescriptionSubtopology()
	st.SubtopologyID = "0"
	for i := 0; i < n; i++ {
		node := kmsg.NewTopologyDescriptionNode()
		node.Name, node.NodeType = "KSTREAM-PROCESSOR-0000000000", 2
		st.Nodes = append(st.Nodes, node)
	}
	d := kmsg.NewTopologyDescription()
	d.Subtopologies = []kmsg.TopologyDescriptionSubtopology{st}
	return d
}

func (h *harness) pushDescription(principal, group, m string, nodes int) int16 {
	req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
	req.Group, req.MemberID, req.TopologyEpoch = group, m, 1
	req.TopologyDescription = nodesDescription(nodes)
	return h.c.StreamsGroupTopologyDescriptionUpdate(principal, req).ErrorCode
}

func (h *harness) descriptionStatus(group string) int8 {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version = 1
	req.Groups, req.IncludeTopologyDescription = []string{group}, true
	return h.c.StreamsGroupDescribe(req).Groups[0].TopologyDescriptionStatus
}

// Topology descriptions (KIP-1331) are bounded per principal over all
// streams groups: a push that would take one principal past
// StreamsDescriptionBytesPerPrincipal is refused, another principal's is
// not, and replacing a principal's own description in a group does not
// count it twice. A stored description survives a restart.
func TestStreamsDescriptionBoundPerPrincipal(t *testing.T) {
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir()}
	size := len(streams.EncodeDescription(nodesDescription(10)))
	h.cfg.StreamsDescriptionBytesPerPrincipal = 2*size + size/2 // two 10-node descriptions fit, not three
	h.open()
	for _, g := range []string{"a", "b", "c"} {
		h.streamsJoin(g, "m")
	}
	if code := h.pushDescription("User:alice", "a", "m", 10); code != 0 {
		t.Fatalf("first push: %v", kerr.ErrorForCode(code))
	}
	if code := h.pushDescription("User:alice", "a", "m", 10); code != 0 {
		t.Fatalf("replacing the group's own description: %v", kerr.ErrorForCode(code))
	}
	if code := h.pushDescription("User:alice", "b", "m", 10); code != 0 {
		t.Fatalf("second group: %v", kerr.ErrorForCode(code))
	}
	if code := h.pushDescription("User:alice", "c", "m", 10); code != kerr.StreamsTopologyDescriptionUpdateFailed.Code {
		t.Fatalf("third group past the principal's bound: %v", kerr.ErrorForCode(code))
	}
	if st := h.descriptionStatus("c"); st != streams.DescriptionNotStored {
		t.Fatalf("refused push: status %d", st)
	}
	if code := h.pushDescription("User:bob", "c", "m", 10); code != 0 {
		t.Fatalf("another principal: %v", kerr.ErrorForCode(code))
	}
	h.restart()
	for _, g := range []string{"a", "b", "c"} {
		if st := h.descriptionStatus(g); st != streams.DescriptionAvailable {
			t.Fatalf("group %s after a restart: status %d", g, st)
		}
	}
}
