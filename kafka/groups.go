package kafka

// Plumbing between the wire layer and the group coordinator
// (kafka/group): the coordinator's lifecycle, what a handler tells it
// about the client, and the topic check for OffsetCommit. The handlers
// themselves are 08_, 09_, 10_–16_, 42_ and 47_*.go.

import (
	"errors"
	"net"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"go.uber.org/zap"
)

// errNoCoordinator closes the connection of a group request sent to a
// server built without an offset store (Config.Offsets nil). Clients only
// get there without FindCoordinator (which answers
// COORDINATOR_NOT_AVAILABLE).
var errNoCoordinator = errors.New("kafka: no group coordinator configured (Config.Offsets is nil)")

// newGroups creates the group coordinator over st.
func (s *Server) newGroups(st *offsets.Store) (*group.Coordinator, error) {
	gcfg := s.cfg.Group
	if gcfg.Topics == nil {
		gcfg.Topics = topicChecker{s}
	}
	if gcfg.Metadata == nil {
		gcfg.Metadata = topicLister{s}
	}
	gcfg.GroupConfig = s.groupConfig
	if gcfg.MayDescribe == nil && s.cfg.Authorizer != nil {
		gcfg.MayDescribe = s.mayDescribeTopic
	}
	return group.NewCoordinator(st, gcfg)
}

// coordinator returns the group coordinator or the error that closes the
// connection.
func (s *Server) coordinator() (*group.Coordinator, error) {
	g := s.coords().groups
	if g == nil {
		s.log.Warn("group-request-without-coordinator")
		return nil, errNoCoordinator
	}
	return g, nil
}

// groupClient is what DescribeGroups reports about a member's client:
// its client id and, as Kafka writes it, "/" + its IP.
func groupClient(rc *reqCtx) group.Client {
	cl := group.Client{}
	if rc.clientID != nil {
		cl.ID = *rc.clientID
	}
	if addr := rc.conn.nc.RemoteAddr(); addr != nil {
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			host = addr.String()
		}
		cl.Host = "/" + host
	}
	if rc.conn.s.cfg.Authorizer != nil {
		cl.Principal, cl.PeerHost = rc.conn.Principal(), rc.conn.peerHost()
	}
	return cl
}

// mayDescribeTopic is the group coordinator's question (server-side regex subscriptions):
// may principal, from host, DESCRIBE topic (a companion topic counts as
// its source, as rc.authzName).
func (s *Server) mayDescribeTopic(principal, host, topic string) bool {
	if s.res != nil {
		if src, ok := s.res.CompanionSource(topic); ok {
			topic = src
		}
	}
	return s.cfg.Authorizer.Authorize(principal, host, auth.OpDescribe, auth.ResourceTopic, topic)
}

// topicChecker lets the coordinator answer UNKNOWN_TOPIC_OR_PARTITION for
// commits to partitions that do not exist, as Kafka does.
type topicChecker struct{ s *Server }

func (tc topicChecker) PartitionExists(topic string, partition int32) bool {
	_, err := tc.s.partitionOf(topic, partition, false)
	if err != nil {
		tc.s.log.Debug("commit-to-unknown-partition", zap.String("topic", topic), zap.Int32("partition", partition))
	}
	return err == nil
}

// topicLister gives consumer groups (KIP-848) the topics to assign: every
// topic of the resolver and the internal topics, as Kafka's broker matches
// subscriptions against every topic, internal ones included (server-side regex subscriptions).
type topicLister struct{ s *Server }

// Partitions looks one topic up, for streams groups (kafka/streams
// Metadata).
func (tl topicLister) Partitions(name string) (int32, bool) { return tl.s.res.Partitions(name) }

func (tl topicLister) Topics() []group.TopicInfo {
	ts := tl.s.res.Topics()
	internal := resolver.InternalTopics()
	out := make([]group.TopicInfo, 0, len(ts)+len(internal))
	for _, t := range ts {
		if !resolver.IsInternalTopic(t.Name) { // a binding from before reserved internal topic names
			out = append(out, group.TopicInfo{Name: t.Name, ID: t.ID, Partitions: t.Partitions})
		}
	}
	for _, name := range internal {
		if id, ok := tl.s.res.InternalTopicID(name); ok {
			out = append(out, group.TopicInfo{Name: name, ID: id, Partitions: internalPartitions})
		}
	}
	return out
}
