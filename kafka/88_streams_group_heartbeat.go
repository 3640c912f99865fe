package kafka

// StreamsGroupHeartbeat (key 88), versions 0–1 (KIP-1071).
//
//   v1  task offsets drive warm-up tasks; the answer carries the
//       acceptable recovery lag as an int64.
//
// The coordinator (kafka/group streams.go, kafka/streams) validates the
// topology, assigns tasks and answers once the change is durable. The
// internal topics the topology needs (repartition topics, compacted
// changelogs) are created here, as Kafka's broker creates them, when the
// principal may CREATE them (on the cluster or the topic); those it may
// not are reported in the member's status. A v1 answer may ask for the
// topology description (TopologyDescriptionRequired, key 93), which the
// group keeps (KIP-1331, kafka/streams). With
// streams.version finalized at 0 (UpdateFeatures) the answer is
// UNSUPPORTED_VERSION (kafka/featuregate).

import (
	"errors"
	"sort"
	"strings"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/featuregate"
	"github.com/kgateway/kgateway/kafka/streams"
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

func handleStreamsGroupHeartbeat(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.StreamsGroupHeartbeatRequest)
	if s.isShareGroup(r.Group) { // One group-id namespace: the id is a share group's
		resp := r.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		msg := "group " + r.Group + " is a share group"
		resp.ErrorMessage = &msg
		return resp, nil
	}
	resp, create := c.StreamsGroupHeartbeat(groupClient(rc), r)
	if refused := s.createInternalTopics(rc, create); len(refused) > 0 {
		st := kmsg.NewStreamsGroupHeartbeatResponseStatus()
		st.StatusCode = streams.StatusMissingInternalTopics
		st.StatusDetail = "Unauthorized to CREATE on topics " + strings.Join(refused, ", ") + "."
		resp.Status = append(resp.Status, st)
	}
	return resp, nil
}

// featureOff is req's UNSUPPORTED_VERSION answer when the feature gating
// its group protocol is finalized at 0 (kafka/featuregate), else nil.
func (s *Server) featureOff(req kmsg.Request) kmsg.Response {
	if s.features == nil {
		return nil
	}
	return featuregate.Refuse(req, s.features.Level)
}

// createInternalTopics creates the topics a streams topology needs and
// that the principal may CREATE; it returns the names it may not. A topic
// another heartbeat created meanwhile is no error.
func (s *Server) createInternalTopics(rc *reqCtx, topics []streams.InternalTopic) []string {
	var refused []string
	cluster := rc.allowedCluster(auth.OpCreate)
	for _, t := range topics {
		if !cluster && !rc.allowed(auth.OpCreate, auth.ResourceTopic, t.Name) {
			refused = append(refused, t.Name)
			continue
		}
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Name, t.Partitions, t.Replication
		if rt.ReplicationFactor == 0 {
			rt.ReplicationFactor = -1
		}
		names := make([]string, 0, len(t.Configs))
		for k := range t.Configs {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			cfg := kmsg.NewCreateTopicsRequestTopicConfig()
			cfg.Name, cfg.Value = k, kmsg.StringPtr(t.Configs[k])
			rt.Configs = append(rt.Configs, cfg)
		}
		if _, err := topicadmin.Create(s.catalogAs(rc), s.cfg.NodeID, rt, false); err != nil && !errors.Is(err, resolver.ErrTopicExists) {
			s.log.Warn("streams-internal-topic-create-failed", zap.String("topic", t.Name), zap.Error(err))
		}
	}
	return refused
}
