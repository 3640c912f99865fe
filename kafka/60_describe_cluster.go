package kafka

// DescribeCluster (key 60), versions 0–2.
//
//   v0  cluster id, controller, brokers (flexible from the start).
//   v1  endpoint type: only brokers (1) are described here.
//   v2  include fenced brokers, and a fenced flag per broker (KIP-1073):
//       the brokers described are the live ones (a single node, or the
//       nodes holding a live cluster membership), none fenced, so the
//       flag is false and the request's choice changes nothing.
//
// One broker, node.id, which is also the controller, at the advertised
// address; in cluster mode the live nodes, and the lowest live node id as
// the controller (leaders at their epochs).
// Cluster authorized operations are filled when asked (per-API authorization).
// Left out: controller endpoints
// (UNSUPPORTED_ENDPOINT_TYPE).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const endpointTypeBrokers = 1

func handleDescribeCluster(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeClusterRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = endpointTypeBrokers
	resp.ClusterAuthorizedOperations = authOpsNotRequested
	if r.Version >= 1 && r.EndpointType != endpointTypeBrokers {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		return resp, nil
	}
	resp.ClusterID = s.cfg.ClusterID
	brokers := s.brokers(rc) // Leaders at their epochs
	resp.ControllerID = s.controllerID(brokers)
	for _, b := range brokers {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = b.NodeID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, db)
	}
	return resp, nil
}
