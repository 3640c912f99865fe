package kafka

// ListPartitionReassignments (key 46), version 0 (flexible).
//
// No reassignment is ever in progress (45_alter_partition_reassignments.go,
// kafka/replicas): every answer, for all partitions or named ones, lists
// none, as Kafka's does when none is running.
// DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleListPartitionReassignments(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !rc.allowedCluster(auth.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	}
	return resp, nil
}
