package kafka

// Cluster-mode routing (cluster routing, doc.go "Cluster mode: routing"): who leads
// a partition, who coordinates groups, where topic changes go, and what
// is not served. Every answer comes from Config.Cluster's memory, per
// request (routing per request); with Cluster nil this node leads everything at epoch 0 and
// every function here answers as the single node always has.

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/routing"
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// catalog is where topic changes go (topic changes through the catalog): the shared catalog in cluster
// mode, else the resolver.
func (s *Server) catalog() Catalog { return s.catalogAs(nil) }

// catalogAs is the catalog for a request: its creations record, and count
// against, the request's principal (tenantOf; nil rc: nobody's).
func (s *Server) catalogAs(rc *reqCtx) Catalog {
	principal := ""
	if rc != nil {
		principal = tenantOf(rc)
	}
	b := topicadmin.Bounded{Catalog: s.res, Topics: s.res, Max: s.cfg.MaxPartitions,
		PerPrincipal: s.cfg.MaxPartitionsPerPrincipal, Principal: principal}
	if s.cfg.Cluster != nil {
		b.Catalog = s.cfg.Cluster.Catalog()
	}
	return b
}

// leader is the partition's leader and leader epoch; ok is false while it
// has no owner. Internal topics, whose partitions are always empty, are
// led by the group coordinator at epoch 0 (leaders at their epochs): that is the node a client
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
// current leader epoch, checked first as Kafka's Partition does (the leader epoch check);
// noLeaderEpoch skips the check. Then a partition another node leads, or
// none, is NOT_LEADER_OR_FOLLOWER (NOT_LEADER_OR_FOLLOWER routing).
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

// brokers are the nodes Metadata and DescribeCluster list (leaders at their epochs): in cluster
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
// every node computes alike (leaders at their epochs); -1 while no node is known.
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

// isCoordinator reports whether this node coordinates groups now (coordinator routing);
// always without Cluster.
func (s *Server) isCoordinator() bool {
	if s.cfg.Cluster == nil {
		return true
	}
	node, ok := s.cfg.Cluster.Coordinator()
	return ok && node == s.cfg.NodeID
}

// notCoordinator answers a group or transaction request on a node that
// does not coordinate them (coordinator routing, cluster transactions); nil when the handler should run.
func (s *Server) notCoordinator(key int16, req kmsg.Request) kmsg.Response {
	if s.isCoordinator() {
		return nil
	}
	return routing.NotCoordinator(key, req)
}

// notInClusterFeature are the features not advertised in cluster mode
// (no share groups without States).
var notInClusterFeature = map[string]bool{shareVersionFeature: true}

// lookupAPI is the dispatch table as this server advertises it: an API
// not served in cluster mode is unknown, and its request closes the
// connection as any unadvertised one does (no share groups without States).
func (s *Server) lookupAPI(key int16) (api, bool) {
	if s.hiddenAPI(key) {
		return api{}, false
	}
	return lookupAPI(key)
}

// apiKeyList is the ApiVersions key list this server advertises (no share groups without States, share groups in cluster mode).
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
		out = append(out, k)
	}
	return out
}

// hiddenAPI reports whether key is not served: the client telemetry APIs
// without a telemetry manager (KIP-714); in cluster mode (no share groups without States), the
// share-group APIs unless share groups are served (share groups in cluster mode).
func (s *Server) hiddenAPI(key int16) bool {
	if routing.TelemetryAPI(key) && s.cfg.Telemetry == nil {
		return true
	}
	return s.cfg.Cluster != nil && routing.NotInCluster(key) && !(routing.ShareAPI(key) && s.shareInCluster())
}

// featureHidden reports whether a feature is not advertised (no share groups without States, share groups in cluster mode).
func (s *Server) featureHidden(name string) bool {
	return s.cfg.Cluster != nil && notInClusterFeature[name] && !(name == shareVersionFeature && s.shareInCluster())
}

// featureFixed reports whether UpdateFeatures may not change a feature:
// one not advertised, and in cluster mode every feature, whose levels
// each node keeps on its own disk while any node may coordinate the
// groups and lead a transaction's partitions (cluster transactions).
func (s *Server) featureFixed(name string) bool {
	return s.featureHidden(name) || s.cfg.Cluster != nil
}
