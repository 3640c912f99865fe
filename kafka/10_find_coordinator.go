package kafka

// FindCoordinator (key 10), versions 0–4.
//
//   v1  key type (0 group, 1 transaction), throttle time, error message.
//   v2  throttle applied after the response.
//   v3  flexible.
//   v4  batched keys (KIP-699).
//
// This node coordinates every group and transactional id, at the address
// this connection dialed (or the advertised one). Left out: v5+ (share
// groups, error semantics of KIP-890).

import (
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
	self := group.Node{ID: s.cfg.NodeID, Host: rc.conn.host, Port: rc.conn.port}
	return groups.FindCoordinator(r, self), nil
}
