package kafka

// WriteTxnMarkers (key 27), versions 1–2.
//
//   v0  removed by Kafka 4.0 (KIP-896): not served.
//   v1  flexible; the baseline.
//   v2  a transaction version per marker (KIP-1228), for the leader's
//       check of its epoch: at 2 the marker's epoch must be above the
//       producer's on the partition (the coordinator bumped it when the
//       transaction ended), but for a retried marker (resolver
//       WriteTxnMarkerTV, txnstate.MarkerFenced).
//
// Kafka's transaction coordinators send it to partition leaders; clients
// send it too: the Admin's abortTransaction (kafka-transactions abort)
// ends a hanging transaction with an ABORT marker written by the leader.
// kgateway's own coordinator writes its markers itself (kafka/txn), so
// this serves the admin's use: each named partition gets a COMMIT or
// ABORT marker for the producer (resolver.WriteTxnMarker), durable before
// the answer. Per partition: UNKNOWN_TOPIC_OR_PARTITION for a missing
// one (an internal topic's empty partitions hold no transactions: the
// same), INVALID_PRODUCER_EPOCH for an epoch older than the producer's,
// TRANSACTION_COORDINATOR_FENCED for a coordinator epoch older than the
// producer's last marker's there. A producer with no open transaction on
// the partition needs no marker and is answered success (the marker
// would end nothing), unless a v2 marker at transaction version 2 is
// older than the producer's epoch there (INVALID_PRODUCER_EPOCH). ALTER or CLUSTER_ACTION on the cluster, as Kafka,
// else CLUSTER_AUTHORIZATION_FAILED for every partition. In cluster mode
// the partition's leader writes it, as Kafka's (a partition led
// elsewhere is NOT_LEADER_OR_FOLLOWER, NOT_LEADER_OR_FOLLOWER routing);
// the coordinator's own markers go through cluster/txnmark.

import (
	"fmt"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleWriteTxnMarkers(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.WriteTxnMarkersRequest)
	resp := r.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	allowed := rc.allowedCluster(auth.OpAlter) || rc.allowedCluster(auth.OpClusterAction)
	for _, m := range r.Markers {
		out := kmsg.NewWriteTxnMarkersResponseMarker()
		out.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			ot := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			ot.Topic = t.Topic
			for _, p := range t.Partitions {
				op := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				op.Partition, op.ErrorCode = p, kerr.ClusterAuthorizationFailed.Code
				if allowed {
					op.ErrorCode = errCode(s.writeTxnMarker(m, t.Topic, p))
				}
				ot.Partitions = append(ot.Partitions, op)
			}
			out.Topics = append(out.Topics, ot)
		}
		resp.Markers = append(resp.Markers, out)
	}
	return resp, nil
}

// writeTxnMarker writes marker m's control batch on one partition.
func (s *Server) writeTxnMarker(m kmsg.WriteTxnMarkersRequestMarker, topic string, partition int32) error {
	if resolver.IsInternalTopic(topic) {
		return fmt.Errorf("%w: the internal topic %s holds no transactions", resolver.ErrUnknownTopic, topic)
	}
	if _, err := s.partitionOf(topic, partition, false); err != nil {
		return err
	}
	if err := s.routeError(topic, partition, noLeaderEpoch); err != nil {
		return err
	}
	return s.res.WriteTxnMarkerTV(topic, partition, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, m.TransactionVersion)
}
