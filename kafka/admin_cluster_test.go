package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// In cluster mode (leaders at their epochs) the admin APIs answer for the partitions this node
// owns: DescribeLogDirs lists them alone, AlterReplicaLogDirs of another
// node's partition is REPLICA_NOT_AVAILABLE, a partition without an owner
// has no leader to elect, DescribeTopicPartitions shows it without one, a
// reassignment to another live node is refused (placement is hashed,
// rendezvous placement), and no feature can change (no share groups without States).
func TestAdminAPIsInCluster(t *testing.T) {
	g := newClusterRig(t, map[string]int32{"t": 3})
	g.cl.lead("t", 0, nodeA, 4)
	g.cl.lead("t", 1, nodeB, 2)
	c := dialRaw(t, g.a.Addr())

	dirs := ask(c, logDirsReq(4, nil)).(*kmsg.DescribeLogDirsResponse)
	if len(dirs.Dirs) != 1 || len(dirs.Dirs[0].Topics) != 1 || len(dirs.Dirs[0].Topics[0].Partitions) != 1 ||
		dirs.Dirs[0].Topics[0].Partitions[0].Partition != 0 {
		t.Errorf("DescribeLogDirs: %+v, want t-0 alone", dirs.Dirs)
	}
	logDir := g.a.cfg.LogDir
	for p, want := range map[int32]int16{0: 0, 1: kerr.ReplicaNotAvailable.Code, 2: kerr.ReplicaNotAvailable.Code} {
		resp := ask(c, alterLogDirsReq(logDir, "t", p)).(*kmsg.AlterReplicaLogDirsResponse)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != want {
			t.Errorf("AlterReplicaLogDirs t-%d: %d, want %d", p, got, want)
		}
	}

	for typ, noLeader := range map[int8]int16{0: kerr.PreferredLeaderNotAvailable.Code, 1: kerr.EligibleLeadersNotAvailable.Code} {
		resp := ask(c, electReq(typ, map[string][]int32{"t": {0, 1, 2}})).(*kmsg.ElectLeadersResponse)
		got := map[int32]int16{}
		for _, p := range resp.Topics[0].Partitions {
			got[p.Partition] = p.ErrorCode
		}
		if got[0] != kerr.ElectionNotNeeded.Code || got[1] != kerr.ElectionNotNeeded.Code || got[2] != noLeader {
			t.Errorf("ElectLeaders type %d: %v", typ, got)
		}
	}

	dtp := ask(c, dtpReq(10, nil, "t")).(*kmsg.DescribeTopicPartitionsResponse)
	for _, p := range dtp.Topics[0].Partitions {
		wantLeader := map[int32]int32{0: nodeA, 1: nodeB, 2: -1}[p.Partition]
		if p.LeaderID != wantLeader || (wantLeader < 0) != (len(p.Replicas) == 0) {
			t.Errorf("DescribeTopicPartitions t-%d: leader %d replicas %v, want leader %d", p.Partition, p.LeaderID, p.Replicas, wantLeader)
		}
	}

	for _, tc := range []struct {
		replicas []int32
		allowRF  bool
		want     int16
	}{
		{[]int32{nodeA}, true, 0},
		{[]int32{nodeB}, true, kerr.InvalidReplicaAssignment.Code},
		{[]int32{nodeA, nodeB}, false, kerr.InvalidReplicationFactor.Code},
		{[]int32{nodeA, nodeB}, true, kerr.InvalidReplicaAssignment.Code},
		{[]int32{99}, true, kerr.InvalidReplicaAssignment.Code},
	} {
		req := reassignReq("t", 0, tc.replicas)
		req.AllowReplicationFactorChange = tc.allowRF
		resp := ask(c, req).(*kmsg.AlterPartitionAssignmentsResponse)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != tc.want {
			t.Errorf("reassign t-0 to %v (allow RF change %v): %d, want %d", tc.replicas, tc.allowRF, got, tc.want)
		}
	}

	resp := ask(c, updateReq(1, true, fu(transactionVersionFeature, 1, 2))).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Errorf("UpdateFeatures of transaction.version in cluster mode: %d, want INVALID_UPDATE_VERSION", resp.ErrorCode)
	}
}
