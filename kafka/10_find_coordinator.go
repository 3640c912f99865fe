package kafka

// FindCoordinator (key 10), versions 0–6.
//
//   v1  key type (0 group, 1 transaction), throttle time, error message.
//   v2  throttle applied after the response.
//   v3  flexible.
//   v4  batched keys (KIP-699).
//   v5  TRANSACTION_ABORTABLE may be returned (KIP-890; never is: no
//       lookup here fails a transaction).
//   v6  key type 2, share (KIP-932): brokers look up the coordinator of
//       a share partition's state, "groupId:topicId:partition", to send
//       it the share-group state RPCs. kgateway keeps that state inside
//       its own share coordinator and serves none of those RPCs, so a
//       well-formed key is answered COORDINATOR_NOT_AVAILABLE, as Kafka
//       answers while it has no share-state topic, and a malformed one
//       INVALID_REQUEST, as Kafka does (kafka/routing). Like Kafka,
//       share keys need CLUSTER_ACTION on the cluster (kafka/authz).
//
// This node coordinates every group and transactional id, at the address
// this connection dialed (or the advertised one). In cluster mode (coordinator routing, cluster transactions)
// groups and transactional ids are coordinated by
// Cluster.Coordinator()'s node.

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/kafka/routing"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleFindCoordinator(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.FindCoordinatorRequest)
	if r.Version >= 6 && r.CoordinatorType == coordinatorShare {
		return routing.FindShareCoordinator(r), nil
	}
	groups := s.coords().groups
	if groups == nil {
		return routing.NoCoordinator(r), nil // a retriable error, not a close
	}
	if s.cfg.Cluster != nil {
		return s.findClusterCoordinator(r), nil
	}
	self := group.Node{ID: s.cfg.NodeID, Host: rc.conn.host, Port: rc.conn.port}
	return groups.FindCoordinator(r, self), nil
}

// findClusterCoordinator answers in cluster mode (coordinator routing, cluster transactions): a group's and
// a transactional id's coordinator is Cluster.Coordinator()'s node,
// COORDINATOR_NOT_AVAILABLE (retriable) while there is none or its
// address is not known yet.
func (s *Server) findClusterCoordinator(r *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	b, err := s.clusterCoordinator(r.CoordinatorType)
	return routing.FindCoordinator(r, routing.Coordinator{NodeID: b.NodeID, Host: b.Host, Port: b.Port}, errCode(err), errMessage(err))
}

// clusterCoordinator is the node coordinating keys of type typ, or why
// there is none (NodeID and Port -1 then).
func (s *Server) clusterCoordinator(typ int8) (Broker, error) {
	none := Broker{NodeID: -1, Port: -1}
	switch typ {
	case coordinatorGroup, coordinatorTxn: // Coordinator routing, cluster transactions: one node coordinates both
	default:
		return none, fmt.Errorf("%w: coordinator type %d", kerr.InvalidRequest, typ)
	}
	node, ok := s.cfg.Cluster.Coordinator()
	if !ok {
		return none, fmt.Errorf("%w: no node coordinates groups now", kerr.CoordinatorNotAvailable)
	}
	b, ok := brokerByID(s.cfg.Cluster.Brokers(), node)
	if !ok {
		return none, fmt.Errorf("%w: coordinator node %d is not among the live nodes", kerr.CoordinatorNotAvailable, node)
	}
	return b, nil
}
