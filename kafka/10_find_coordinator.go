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
//       INVALID_REQUEST, as Kafka does. Like Kafka, share keys need
//       CLUSTER_ACTION on the cluster (authz_groups.go).
//
// This node coordinates every group and transactional id, at the address
// this connection dialed (or the advertised one). In cluster mode (coordinator routing, cluster transactions at version 1)
// groups and transactional ids are coordinated by
// Cluster.Coordinator()'s node.

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/kgateway/kgateway/kafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleFindCoordinator(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.FindCoordinatorRequest)
	if r.Version >= 6 && r.CoordinatorType == coordinatorShare {
		return findShareCoordinator(r), nil
	}
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

// findClusterCoordinator answers in cluster mode (coordinator routing, cluster transactions at version 1): a group's and
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
	case coordinatorGroup, coordinatorTxn: // Coordinator routing, cluster transactions at version 1: one node coordinates both
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

// findShareCoordinator answers share-state keys (v6+): none is served.
func findShareCoordinator(r *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	for _, key := range r.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Port = key, -1, -1
		err := fmt.Errorf("%w: share-group state is kept inside kgateway's share coordinator; the share-group state RPCs are not served", kerr.CoordinatorNotAvailable)
		if !validShareKey(key) {
			err = fmt.Errorf("%w: share coordinator key %q is not groupId:topicId:partition", kerr.InvalidRequest, key)
		}
		co.ErrorCode, co.ErrorMessage = errCode(err), errMessage(err)
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return resp
}

// validShareKey reports whether key is "groupId:topicId:partition" with a
// non-empty group, a base64 (URL alphabet, unpadded) 16-byte topic id and
// a partition number, as Kafka's SharePartitionKey parses it.
func validShareKey(key string) bool {
	parts := strings.Split(key, ":")
	if len(parts) != 3 || parts[0] == "" {
		return false
	}
	id, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(id) != 16 {
		return false
	}
	_, err = strconv.ParseInt(parts[2], 10, 32)
	return err == nil
}
