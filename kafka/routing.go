package kafka

// Cluster-mode routing (Y1–Y7, doc.go "Cluster mode: routing"): who leads
// a partition, who coordinates groups, where topic changes go, and what
// is not served. Every answer comes from Config.Cluster's memory, per
// request (Y7); with Cluster nil this node leads everything at epoch 0 and
// every function here answers as the single node always has.

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// catalog is where topic changes go (Y6): the shared catalog in cluster
// mode, else the resolver.
func (s *Server) catalog() Catalog {
	if s.cfg.Cluster == nil {
		return boundedCatalog{s.res, s}
	}
	return boundedCatalog{s.cfg.Cluster.Catalog(), s}
}

// leader is the partition's leader and leader epoch; ok is false while it
// has no owner. Internal topics, whose partitions are always empty, are
// led by the group coordinator at epoch 0 (Y1): that is the node a client
// asks about them anyway.
func (s *Server) leader(topic string, partition int32) (node, epoch int32, ok bool) {
	switch {
	case s.cfg.Cluster == nil:
		return s.cfg.NodeID, leaderEpoch, true
	case resolver.IsInternalTopic(topic):
		node, ok = s.cfg.Cluster.Coordinator()
		return node, leaderEpoch, ok
	}
	return s.cfg.Cluster.Leader(topic, partition)
}

// routeError is why this node does not serve a partition in cluster mode
// (nil: it does, and always without Cluster). current is the client's
// current leader epoch, checked first as Kafka's Partition does (Y3);
// noLeaderEpoch skips the check. Then a partition another node leads, or
// none, is NOT_LEADER_OR_FOLLOWER (Y2).
func (s *Server) routeError(topic string, partition int32, current int32) error {
	if s.cfg.Cluster == nil {
		return nil
	}
	node, epoch, ok := s.leader(topic, partition)
	if ok {
		if err := epochError(current, epoch); err != nil {
			return err
		}
	}
	if !ok {
		return fmt.Errorf("%w: %s partition %d has no leader now", kerr.NotLeaderForPartition, topic, partition)
	}
	if node != s.cfg.NodeID {
		return fmt.Errorf("%w: %s partition %d is led by node %d", kerr.NotLeaderForPartition, topic, partition, node)
	}
	return nil
}

// currentEpochOf is the epoch a client's request is checked against: the
// partition's in cluster mode, the single node's 0 otherwise; -1 while the
// partition has no owner.
func (s *Server) currentEpochOf(topic string, partition int32) int32 {
	_, epoch, ok := s.leader(topic, partition)
	if !ok {
		return noLeaderEpoch
	}
	return epoch
}

// movedTo reports, for a partition answered with err, the leader a client
// should move to (KIP-951): its node and epoch, ok false when err is not
// a routing error or there is no leader.
func (s *Server) movedTo(topic string, partition int32, err error) (node, epoch int32, ok bool) {
	if s.cfg.Cluster == nil {
		return 0, 0, false
	}
	code := errCode(err)
	if code != kerr.NotLeaderForPartition.Code && code != kerr.FencedLeaderEpoch.Code {
		return 0, 0, false
	}
	return s.leader(topic, partition)
}

// brokers are the nodes Metadata and DescribeCluster list (Y1): in cluster
// mode the live ones, else this node at the address rc dialed (or the
// advertised one).
func (s *Server) brokers(rc *reqCtx) []Broker {
	if s.cfg.Cluster == nil {
		return []Broker{{NodeID: s.cfg.NodeID, Host: rc.conn.host, Port: rc.conn.port}}
	}
	return s.cfg.Cluster.Brokers()
}

// controllerID is the controller Metadata and DescribeCluster name. A
// cluster has none (etcd decides), so it is the lowest live node id, which
// every node computes alike (Y1); -1 while no node is known.
func (s *Server) controllerID(brokers []Broker) int32 {
	if s.cfg.Cluster == nil {
		return s.cfg.NodeID
	}
	id := int32(-1)
	for _, b := range brokers {
		if id < 0 || b.NodeID < id {
			id = b.NodeID
		}
	}
	return id
}

// brokerByID finds a node among the live ones.
func brokerByID(brokers []Broker, id int32) (Broker, bool) {
	for _, b := range brokers {
		if b.NodeID == id {
			return b, true
		}
	}
	return Broker{}, false
}

// isCoordinator reports whether this node coordinates groups now (Y4);
// always without Cluster.
func (s *Server) isCoordinator() bool {
	if s.cfg.Cluster == nil {
		return true
	}
	node, ok := s.cfg.Cluster.Coordinator()
	return ok && node == s.cfg.NodeID
}

// groupAPIs are the APIs only the group coordinator serves (Y4), the
// transaction APIs, which it serves too (Y19), and those of share groups
// but ShareFetch and ShareAcknowledge (Y8).
var groupAPIs = map[int16]bool{8: true, 9: true, 11: true, 12: true, 13: true, 14: true, 15: true,
	16: true, 42: true, 47: true, 68: true, 69: true,
	24: true, 25: true, 26: true, 28: true, 65: true, 66: true,
	76: true, 77: true, 90: true, 91: true, 92: true}

// notCoordinator answers a group or transaction request on a node that
// does not coordinate them (Y4, Y19); nil when the handler should run.
// InitProducerId is one only with a transactional id.
func (s *Server) notCoordinator(key int16, req kmsg.Request) kmsg.Response {
	if s.isCoordinator() {
		return nil
	}
	if r, ok := req.(*kmsg.InitProducerIDRequest); ok && r.TransactionalID != nil {
		resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = kerr.NotCoordinator.Code, -1, -1
		return resp
	}
	if !groupAPIs[key] {
		return nil
	}
	if resp := shareNotCoordinator(req); resp != nil {
		return resp
	}
	return notCoordinatorResponse(req)
}

// notCoordinatorResponse is NOT_COORDINATOR wherever the request's
// response carries an error: per partition, per group or once. ListGroups
// answers an empty list: in Kafka each broker lists the groups it
// coordinates, and admin clients ask every broker and merge.
func notCoordinatorResponse(req kmsg.Request) kmsg.Response {
	code := kerr.NotCoordinator.Code
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation, resp.MemberID = code, -1, r.MemberID
		return resp
	case *kmsg.HeartbeatRequest:
		resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.SyncGroupRequest:
		resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.OffsetCommitRequest:
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = offsetCommitErrors(r.Topics, code)
		return resp
	case *kmsg.OffsetFetchRequest:
		return offsetFetchNotCoordinator(r)
	case *kmsg.DescribeGroupsRequest:
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = g, code, authOpsNotRequested
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.ListGroupsRequest:
		return r.ResponseKind()
	case *kmsg.DeleteGroupsRequest:
		resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.OffsetDeleteRequest:
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ConsumerGroupHeartbeatRequest:
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ConsumerGroupDescribeRequest:
		resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode, rg.AuthorizedOperations = g, code, authOpsNotRequested
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	}
	if resp := txnNotCoordinator(req); resp != nil {
		return resp
	}
	panic(fmt.Sprintf("kafka: notCoordinatorResponse: %T is not a group request", req))
}

// offsetFetchNotCoordinator is OffsetFetch's NOT_COORDINATOR as Kafka's
// OffsetFetchRequest.getErrorResponse builds it: per group from v8, once
// from v2, per partition before.
func offsetFetchNotCoordinator(r *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	code := kerr.NotCoordinator.Code
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	switch {
	case r.Version >= 8:
		for _, g := range r.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, code
			resp.Groups = append(resp.Groups, rg)
		}
	case r.Version >= 2:
		resp.ErrorCode = code
	default:
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, offsetFetchErrors(t.Topic, t.Partitions, code))
		}
	}
	return resp
}

// notInCluster are the APIs not served in cluster mode (Y5): share
// groups, unless they have a durable home (Y8).
var notInCluster = map[int16]bool{
	76: true, 77: true, 78: true, 79: true, 90: true, 91: true, 92: true, // share groups
	88: true, 89: true, // streams groups (KIP-1071): served by a single node only
	27: true, // WriteTxnMarkers: cluster markers are decided and relayed by cluster/txnmark
}

// notInClusterFeature are the features not advertised in cluster mode
// (Y5, Y19).
var notInClusterFeature = map[string]bool{transactionVersionFeature: true, shareVersionFeature: true, streamsVersionFeature: true}

// clusterMaxVersion caps APIs in cluster mode (Y19): transactions are
// served at transaction version 1, so neither Produce v12 nor EndTxn and
// TxnOffsetCommit v5, which would add partitions and groups to a
// transaction implicitly (X18) from whichever node leads them, are
// advertised or served.
var clusterMaxVersion = map[int16]int16{0: 11, 26: 4, 28: 4}

// lookupAPI is the dispatch table as this server advertises it: an API
// not served in cluster mode is unknown, and its request closes the
// connection as any unadvertised one does (Y5); a capped one is
// unsupported above its cap (Y19).
func (s *Server) lookupAPI(key int16) (api, bool) {
	if s.hiddenAPI(key) {
		return api{}, false
	}
	if s.cfg.Cluster == nil {
		return lookupAPI(key)
	}
	a, ok := lookupAPI(key)
	if max, capped := clusterMaxVersion[key]; ok && capped {
		a.max = max
	}
	return a, ok
}

// telemetryAPIs are GetTelemetrySubscriptions and PushTelemetry.
var telemetryAPIs = map[int16]bool{71: true, 72: true}

// apiKeyList is the ApiVersions key list this server advertises (Y5, Y8).
func (s *Server) apiKeyList() []kmsg.ApiVersionsResponseApiKey {
	switch {
	case s.cfg.Telemetry == nil:
	case s.cfg.Cluster == nil:
		return apiKeyList()
	case !s.shareInCluster():
		return advertisedInCluster
	}
	var out []kmsg.ApiVersionsResponseApiKey
	for _, k := range apiKeyList() {
		if s.hiddenAPI(k.ApiKey) {
			continue
		}
		if max, capped := clusterMaxVersion[k.ApiKey]; capped && s.cfg.Cluster != nil {
			k.MaxVersion = max // Y19
		}
		out = append(out, k)
	}
	return out
}

// hiddenAPI reports whether key is not served: the client telemetry APIs
// without a telemetry manager (KIP-714); in cluster mode (Y5), the
// share-group APIs unless share groups are served (Y8).
func (s *Server) hiddenAPI(key int16) bool {
	if telemetryAPIs[key] && s.cfg.Telemetry == nil {
		return true
	}
	return s.cfg.Cluster != nil && notInCluster[key] && !(shareAPIs[key] && s.shareInCluster())
}

// featureHidden reports whether a feature is not advertised (Y5, Y8).
func (s *Server) featureHidden(name string) bool {
	return s.cfg.Cluster != nil && notInClusterFeature[name] && !(name == shareVersionFeature && s.shareInCluster())
}

// txnNotCoordinator is NOT_COORDINATOR for the transaction APIs (Y19);
// ListTransactions answers an empty list, as ListGroups does (Y4).
func txnNotCoordinator(req kmsg.Request) kmsg.Response {
	code := kerr.NotCoordinator.Code
	switch r := req.(type) {
	case *kmsg.AddPartitionsToTxnRequest:
		resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		for _, tx := range r.Transactions { // the batched form (v4+)
			res := kmsg.NewAddPartitionsToTxnResponseTransaction()
			res.TransactionalID = tx.TransactionalID
			for _, t := range tx.Topics {
				rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
					rp.Partition, rp.ErrorCode = p, code
					rt.Partitions = append(rt.Partitions, rp)
				}
				res.Topics = append(res.Topics, rt)
			}
			resp.Transactions = append(resp.Transactions, res)
		}
		for _, t := range r.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.AddOffsetsToTxnRequest:
		resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.EndTxnRequest:
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return resp
	case *kmsg.TxnOffsetCommitRequest:
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = txnCommitErrors(r.Topics, code)
		return resp
	case *kmsg.DescribeTransactionsRequest:
		resp := r.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range r.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.ErrorCode = id, code
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp
	case *kmsg.ListTransactionsRequest:
		return r.ResponseKind()
	}
	return nil
}
