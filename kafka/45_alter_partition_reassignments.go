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
	"fmt"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/replicas"
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
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			o := replicas.Outcome{Code: kerr.ClusterAuthorizationFailed.Code}
			if allowed {
				o = s.reassign(t.Topic, p.Partition, p.Replicas, live, allowRF)
			}
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, o.Code
			if o.Message != "" {
				rp.ErrorMessage = kmsg.StringPtr(o.Message)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) reassign(topic string, partition int32, target []int32, live map[int32]bool, allowRF bool) replicas.Outcome {
	n, ok := s.partitionCount(topic)
	switch {
	case !ok:
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: fmt.Sprintf("Unable to find a topic named %s.", topic)}
	case partition < 0 || partition >= n:
		return replicas.Outcome{Code: kerr.UnknownTopicOrPartition.Code, Message: fmt.Sprintf("Unable to find partition %s:%d.", topic, partition)}
	}
	var current []int32
	if node, _, ok := s.leader(topic, partition); ok {
		current = []int32{node}
	}
	return replicas.Reassign(current, target, func(id int32) bool { return live[id] }, allowRF)
}
