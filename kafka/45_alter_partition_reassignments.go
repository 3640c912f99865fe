package kafka

// AlterPartitionReassignments (key 45), versions 0–1.
//
//   v0  per partition, the target replicas (null: cancel); flexible.
//   v1  allow_replication_factor_change (KIP-1101).
//
// Every partition has one replica, its leader, and placement is not
// chosen by request (kafka/replicas): a target checked as Kafka's
// controller checks a manual assignment (empty list, unregistered or
// repeated broker: INVALID_REPLICA_ASSIGNMENT), then a changed replica
// count without allow_replication_factor_change is
// INVALID_REPLICATION_FACTOR; the current replica set is accepted and
// changes nothing (Kafka completes such a reassignment at once); any
// other is INVALID_REPLICA_ASSIGNMENT, since no partition can be moved
// to named brokers (README: cluster mode places partitions by
// rendezvous hashing). A cancel is NO_REASSIGNMENT_IN_PROGRESS. A topic
// or partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION.
// ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED, top-level and
// per partition.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/topicview"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterPartitionReassignments(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	allowRF := r.Version < 1 || r.AllowReplicationFactorChange
	resp.AllowReplicationFactorChange = allowRF
	allowed := rc.allowedCluster(auth.OpAlter)
	if !allowed {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	}
	live := map[int32]bool{}
	for _, b := range s.brokers(rc) {
		live[b.NodeID] = true
	}
	resp.Topics = topicview.Reassign(s.view(), r.Topics, allowed, allowRF, func(id int32) bool { return live[id] })
	return resp, nil
}
