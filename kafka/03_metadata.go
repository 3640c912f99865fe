package kafka

// Metadata (key 3), versions 0–13.
//
//   v1  controller id, internal flag; an empty topic list means none
//       (v0: all).
//   v2  cluster id.      v3  throttle time.
//   v4  allow_auto_topic_creation (before v4 always allowed).
//   v5  offline replicas.            v7  leader epoch (0 on a single node).
//   v8  authorized operations: filled when asked (kafka/authz, per-API authorization),
//       else INT32_MIN ("not requested").
//   v9  flexible.        v10 topic ids, request by id.
//   v11 drops cluster authorized operations.  v12 nullable topic names.
//   v13 a top-level error code (KIP-1102): REBOOTSTRAP_REQUIRED tells a
//       client to rediscover the cluster from its seeds. Apache Kafka 4.4
//       never sends it in Metadata (only in ApiVersions v5, KIP-1242) and
//       neither does kgateway: the code is always 0.
//
// One broker (node.id) leads every partition and is the controller, with
// replicas and ISR [node.id]. In cluster mode (leaders at their epochs) the brokers are the
// live nodes, each partition is led by its owner at its ownership epoch
// (LEADER_NOT_AVAILABLE while it has none), the controller is the lowest
// live node id, and auto-creation goes through the shared catalog (topic changes through the catalog).
// The request that auto-creates a topic is answered without it
// (UNKNOWN_TOPIC_OR_PARTITION, as Kafka) and the creation runs on
// (autoCreate, kafka/autocreate). __consumer_offsets and __transaction_state
// are listed as internal topics whose partitions are always empty
// (internal_topics.go). Auto-creation goes through
// resolver.EnsureTopic, which follows auto.create.topics.enable and
// num.partitions. Left out: racks.

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/authz"
	"github.com/kgateway/kgateway/kafka/autocreate"
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/kafka/topicview"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authOpsNotRequested is what Kafka returns when operations were not asked
// for (or are not computed).
const authOpsNotRequested = authz.OperationsNotRequested

func handleMetadata(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.MetadataRequest)
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	brokers := s.brokers(rc) // Leaders at their epochs
	for _, b := range brokers {
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port, mb.Rack = b.NodeID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, mb)
	}
	resp.ClusterID = &s.cfg.ClusterID
	resp.ControllerID = s.controllerID(brokers)
	resp.AuthorizedOperations = authOpsNotRequested

	allowCreate := r.Version < 4 || r.AllowAutoTopicCreation
	resp.Topics = topicview.MetadataTopics(metadataHost{viewHost{s}, rc, allowCreate}, r)
	return resp, nil
}

// metadataHost is the Server as topicview.MetadataTopics reads it for
// one request, which may auto-create topics (allowCreate).
type metadataHost struct {
	viewHost
	rc          *reqCtx
	allowCreate bool
}

func (h metadataHost) TopicByID(id [16]byte) (resolver.Topic, bool) {
	return h.s.res.TopicByID(resolver.TopicID(id))
}
func (h metadataHost) InternalTopicByID(id [16]byte) (string, bool) {
	return h.s.res.InternalTopicByID(resolver.TopicID(id))
}
func (h metadataHost) Code(err error) int16 { return errCode(err) }

// Existing is the named topic; one this request may auto-create is
// started (autoCreate).
func (h metadataHost) Existing(name string) (resolver.Topic, error) {
	if h.allowCreate {
		return h.s.autoCreate(h.rc, name)
	}
	t, ok := h.s.res.Topic(name)
	if !ok {
		return t, resolver.ErrUnknownTopic
	}
	return t, nil
}

// autoCreate answers a topic a Metadata request may auto-create: an
// existing topic is described; a missing one is answered
// UNKNOWN_TOPIC_OR_PARTITION without partitions, and its creation (topic changes through the catalog)
// started unless one is in flight (kafka/autocreate), as Kafka answers.
// A name the broker would refuse is refused at once: an invalid one, any
// when auto.create.topics.enable is off, any beyond partitions.max.
func (s *Server) autoCreate(rc *reqCtx, name string) (resolver.Topic, error) {
	if t, ok := s.res.Topic(name); ok {
		return t, nil
	}
	if !s.res.AutoCreateTopics() {
		return resolver.Topic{}, fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, name)
	}
	// partitions.max and the principal's own bound are refused at once,
	// as before the creation was asynchronous (kafka/topicadmin); the
	// topic counts against the principal that asked for it.
	cat := s.catalogAs(rc)
	if b, ok := cat.(topicadmin.Bounded); ok {
		if err := b.Room(s.res.DefaultPartitions(), b.Principal); err != nil {
			return resolver.Topic{}, err
		}
	}
	s.autoCreator().StartWith(name, func(name string) error {
		_, err := cat.EnsureTopic(name)
		return err
	})
	return resolver.Topic{}, fmt.Errorf("%w: %q is being auto-created; ask again", resolver.ErrUnknownTopic, name)
}

// autoCreator is the server's auto-creation runner, made at first use.
func (s *Server) autoCreator() *autocreate.Creator {
	s.autoOnce.Do(func() {
		s.auto = autocreate.New(func(name string) error {
			_, err := s.catalog().EnsureTopic(name)
			return err
		}, &s.conns, s.log)
	})
	return s.auto
}
