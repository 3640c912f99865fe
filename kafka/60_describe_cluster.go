package kafka

// DescribeCluster (key 60), versions 0–1.
//
//   v0  cluster id, controller, brokers (flexible from the start).
//   v1  endpoint type: only brokers (1) are described here.
//
// One broker, node.id, which is also the controller, at the advertised
// address; in cluster mode the live nodes, and the lowest live node id as
// the controller (Y1).
// Cluster authorized operations are filled when asked (A11).
// Left out: controller endpoints
// (UNSUPPORTED_ENDPOINT_TYPE), v2 fenced brokers.

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
	brokers := s.brokers(rc) // Y1
	resp.ControllerID = s.controllerID(brokers)
	for _, b := range brokers {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = b.NodeID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, db)
	}
	return resp, nil
}
