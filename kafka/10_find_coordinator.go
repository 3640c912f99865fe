package kafka

// FindCoordinator (key 10), versions 0–4.
//
//   v1  key type (0 group, 1 transaction), throttle time, error message.
//   v2  throttle applied after the response.
//   v3  flexible.
//   v4  batched keys (KIP-699).
//
// This node coordinates every group and transactional id, at the address
// this connection dialed (or the advertised one). In cluster mode (Y4, Y19)
// groups and transactional ids are coordinated by
// Cluster.Coordinator()'s node. Left out: v5+ (share
// groups, error semantics of KIP-890).

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleFindCoordinator(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.FindCoordinatorRequest)
	groups := s.coords().groups
	if groups == nil {
		// No offset store: clients see a retriable error, not a close.
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.NodeID, resp.Port = kerr.CoordinatorNotAvailable.Code, -1, -1
		for _, key := range r.CoordinatorKeys {
			co := kmsg.NewFindCoordinatorResponseCoordinator()
			co.Key, co.ErrorCode, co.NodeID, co.Port = key, kerr.CoordinatorNotAvailable.Code, -1, -1
			resp.Coordinators = append(resp.Coordinators, co)
		}
		return resp, nil
	}
	if s.cfg.Cluster != nil {
		return s.findClusterCoordinator(r), nil
	}
	self := group.Node{ID: s.cfg.NodeID, Host: rc.conn.host, Port: rc.conn.port}
	return groups.FindCoordinator(r, self), nil
}

// findClusterCoordinator answers in cluster mode (Y4, Y19): a group's and
// a transactional id's coordinator is Cluster.Coordinator()'s node,
// COORDINATOR_NOT_AVAILABLE (retriable) while there is none or its
// address is not known yet.
func (s *Server) findClusterCoordinator(r *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	b, err := s.clusterCoordinator(r.CoordinatorType)
	if r.Version < 4 {
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = errCode(err), errMessage(err), b.NodeID, b.Host, b.Port
		return resp
	}
	for _, key := range r.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.ErrorCode, co.ErrorMessage, co.NodeID, co.Host, co.Port = key, errCode(err), errMessage(err), b.NodeID, b.Host, b.Port
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return resp
}

// clusterCoordinator is the node coordinating keys of type typ, or why
// there is none (NodeID and Port -1 then).
func (s *Server) clusterCoordinator(typ int8) (Broker, error) {
	none := Broker{NodeID: -1, Port: -1}
	switch typ {
	case coordinatorGroup, coordinatorTxn: // Y4, Y19: one node coordinates both
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
