package kafka

// Share groups in cluster mode (share groups in cluster mode, share reads at the leaders and group configs at the coordinator, share groups in cluster mode): the group
// coordinator node serves membership and the offsets admin over its
// mirrored store, with the share-partition states in Config.Share.States;
// every node serves ShareFetch and ShareAcknowledge for the partitions it
// leads, through its leader side (share.NewLeader).

import (
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shareInCluster reports whether share groups are served in cluster mode:
// only where their states have a durable home shared by the nodes (share groups in cluster mode).
func (s *Server) shareInCluster() bool {
	return s.cfg.Cluster != nil && s.cfg.Share.States != nil
}

// newShareLeader is the leader side of a cluster node (share reads at the leaders); nil without
// one.
func (s *Server) newShareLeader() *share.Coordinator {
	if !s.shareInCluster() {
		return nil
	}
	scfg := s.cfg.Share
	return share.NewLeader(scfg.States, shareLog{s}, scfg)
}

// shareFetcher is what serves ShareFetch and ShareAcknowledge: the leader
// side in cluster mode (share reads at the leaders), else the share coordinator.
func (s *Server) shareFetcher() (*share.Coordinator, error) {
	if s.shareLeader != nil {
		return s.shareLeader, nil
	}
	return s.shareCoordinator()
}

// shareCurrentLeader names, for each partition answered
// NOT_LEADER_OR_FOLLOWER, its current leader and that node's endpoint
// (KIP-951, share reads at the leaders), so the share consumer moves without a Metadata round
// trip.
func (s *Server) shareCurrentLeader(id [16]byte, partition int32, code int16) (node, epoch int32, ok bool) {
	if s.cfg.Cluster == nil || code != kerr.NotLeaderForPartition.Code {
		return -1, -1, false
	}
	name, _, found := s.topicByID(id)
	if !found {
		return -1, -1, false
	}
	return s.leader(name, partition)
}

// shareNodes are the cluster's nodes as share answers name them.
func (s *Server) shareNodes() []share.Endpoint {
	bs := s.cfg.Cluster.Brokers()
	out := make([]share.Endpoint, len(bs))
	for i, b := range bs {
		out[i] = share.Endpoint{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack}
	}
	return out
}
