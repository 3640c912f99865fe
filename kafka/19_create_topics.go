package kafka

// CreateTopics (key 19), versions 0–7.
//
//   v1  validate_only; an error message per topic.
//   v2  throttle time.   v3, v4  nothing new.
//   v5  flexible; the created topic's partitions, replication factor and
//       configs are returned.
//   v6  nothing new.     v7  topic ids.
//
// The resolver validates names, partition counts (-1: num.partitions),
// replication (-1 or 1: one broker) and configs; kafka/topicadmin checks
// the request (a name listed twice, a manual replica assignment) and
// bounds the partitions.
// In cluster mode the change goes through the shared catalog (topic changes through the catalog).
// Left out: request timeouts (creation is synchronous).

import (
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleCreateTopics(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.CreateTopicsRequest)
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := make(map[string]int, len(r.Topics))
	for _, rt := range r.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range r.Topics {
		var t resolver.Topic
		var err error
		if err = topicadmin.Repeated(seen, rt.Topic); err != nil {
		} else if err = s.mutationRefused(rc); err == nil { // KIP-599
			t, err = topicadmin.Create(s.catalogAs(rc), s.cfg.NodeID, rt, r.ValidateOnly)
			if err == nil && !r.ValidateOnly {
				s.mutated(rc, t.Partitions)
			}
		}
		resp.Topics = append(resp.Topics, s.createdTopic(rt, t, err))
	}
	return resp, nil
}

// createdTopic answers for one topic. From v5 the response carries every
// config of the new topic with its source, as DescribeConfigs would.
func (s *Server) createdTopic(rt kmsg.CreateTopicsRequestTopic, t resolver.Topic, err error) kmsg.CreateTopicsResponseTopic {
	out := kmsg.NewCreateTopicsResponseTopic()
	out.Topic = rt.Topic
	if err != nil {
		if errors.Is(err, resolver.ErrTopicExists) {
			err = kafkaWorded{err, fmt.Sprintf("Topic '%s' already exists.", rt.Topic)}
		}
		out.ErrorCode = errCode(err)
		out.ErrorMessage = errMessage(err)
		out.NumPartitions, out.ReplicationFactor = -1, -1
		// Empty, not null: Kafka's Configs defaults to an empty list.
		out.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
		return out
	}
	out.TopicID = t.ID
	out.NumPartitions, out.ReplicationFactor = t.Partitions, 1
	for _, e := range s.res.ConfigsFor(t.Configs) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.Source = e.Name, &e.Value, int8(e.Source)
		c.ReadOnly, c.IsSensitive = e.ReadOnly, false
		out.Configs = append(out.Configs, c)
	}
	return out
}
