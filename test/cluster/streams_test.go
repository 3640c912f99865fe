package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsHeartbeat is a streams group member's heartbeat (KIP-1071):
// its join (epoch 0: topology of one subtopology reading topic) or a
// plain heartbeat at epoch.
func streamsHeartbeat(group, member, topic string, epoch int32) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, member, epoch, -1
	if epoch == 0 {
		req.RebalanceTimeoutMillis, req.ProcessID = 10000, kmsg.StringPtr("process-1")
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		topo.Epoch = 1
		st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		st.SubtopologyID, st.SourceTopics = "0", []string{topic}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
		req.Topology = &topo
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	return req
}

// askCoordinator sends req to group's coordinator, as node up[0] names
// it, retrying while there is none or it moves.
func (c *Cluster) askCoordinator(ctx context.Context, group string, req kmsg.Request) (kmsg.Response, int, error) {
	coord, err := c.Coordinator(ctx, c.Up()[0], group)
	if err != nil {
		return nil, -1, err
	}
	resp, err := c.Ask(ctx, coord, req)
	if err != nil {
		return nil, coord, err
	}
	if r, ok := resp.(*kmsg.StreamsGroupHeartbeatResponse); ok {
		switch code := r.ErrorCode; code {
		case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
			return nil, coord, kerr.ErrorForCode(code)
		}
	}
	return resp, coord, nil
}

// Streams groups in cluster mode are the group coordinator's, their state
// in its mirrored offsets store as consumer groups' (the coordinator role): a member that
// joined and holds its tasks goes on at its epoch on the next
// coordinator after the first is killed, with its tasks, without a
// rejoin.
func TestClusterStreamsGroupCoordinatorMoves(t *testing.T) {
	c := StartCluster(t, 2)
	const topic, group, member = "streams-in", "streams-group", "streams-member-0000001"
	c.CreateTopic(topic, 2)
	var resp *kmsg.StreamsGroupHeartbeatResponse
	var coord int
	waitFor(t, 60*time.Second, "the member joins", func(ctx context.Context) (bool, error) {
		r, n, err := c.askCoordinator(ctx, group, streamsHeartbeat(group, member, topic, 0))
		if err != nil {
			return false, err
		}
		resp, coord = r.(*kmsg.StreamsGroupHeartbeatResponse), n
		return resp.ErrorCode == 0, kerr.ErrorForCode(resp.ErrorCode)
	})
	epoch := resp.MemberEpoch
	waitFor(t, 60*time.Second, "the member holds both tasks", func(ctx context.Context) (bool, error) {
		r, n, err := c.askCoordinator(ctx, group, streamsHeartbeat(group, member, topic, epoch))
		if err != nil {
			return false, err
		}
		resp, coord = r.(*kmsg.StreamsGroupHeartbeatResponse), n
		if resp.ErrorCode != 0 {
			return false, kerr.ErrorForCode(resp.ErrorCode)
		}
		epoch = resp.MemberEpoch
		return len(resp.ActiveTasks) == 1 && len(resp.ActiveTasks[0].Partitions) == 2, nil
	})

	c.Kill(coord)
	waitFor(t, 90*time.Second, "the next coordinator takes the member's heartbeat", func(ctx context.Context) (bool, error) {
		r, n, err := c.askCoordinator(ctx, group, streamsHeartbeat(group, member, topic, epoch))
		if err != nil {
			return false, err
		}
		if n == coord {
			return false, errors.New("still the killed coordinator")
		}
		resp = r.(*kmsg.StreamsGroupHeartbeatResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat on the new coordinator: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		return true, nil
	})
	if resp.MemberEpoch != epoch || resp.ActiveTasks != nil && (len(resp.ActiveTasks) != 1 || len(resp.ActiveTasks[0].Partitions) != 2) {
		t.Fatalf("on the new coordinator: epoch %d (was %d), tasks %+v", resp.MemberEpoch, epoch, resp.ActiveTasks)
	}
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, _, err := c.askCoordinator(ctx, group, d)
	if err != nil {
		t.Fatal(err)
	}
	dg := r.(*kmsg.StreamsGroupDescribeResponse).Groups
	if len(dg) != 1 || dg[0].ErrorCode != 0 || len(dg[0].Members) != 1 || dg[0].Members[0].MemberEpoch != epoch {
		t.Fatalf("described on the new coordinator: %+v", dg)
	}
}
