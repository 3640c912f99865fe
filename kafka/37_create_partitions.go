package kafka

// CreatePartitions (key 37), versions 0–3.
//
//   v0  grow topics to a new partition count, with an optional replica
//       assignment for the new partitions; validate_only.
//   v1  nothing new (throttling after the response).
//   v2  flexible.
//   v3  nothing new.
//
// The resolver persists the grown binding and opens the new partitions'
// ledgers before answering; the next Metadata shows them. A count that
// does not grow the topic (or exceeds the resolver's bound) is
// INVALID_PARTITIONS; an assignment must list one entry per new partition,
// each this broker alone (INVALID_REPLICA_ASSIGNMENT otherwise). A topic
// listed twice is INVALID_REQUEST.
// In cluster mode the change goes through the shared catalog (topic changes through the catalog).
// Left out: request timeouts (creation is synchronous).

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleCreatePartitions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.CreatePartitionsRequest)
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := make(map[string]int, len(r.Topics))
	for _, rt := range r.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range r.Topics {
		out := kmsg.NewCreatePartitionsResponseTopic()
		out.Topic = rt.Topic
		var err error
		if seen[rt.Topic] > 1 {
			err = fmt.Errorf("%w: topic %q is listed more than once", kerr.InvalidRequest, rt.Topic)
		} else if err = s.mutationRefused(rc); err == nil { // KIP-599
			var before int32
			if t, ok := s.res.Topic(rt.Topic); ok {
				before = t.Partitions
			}
			err = s.createPartitions(rc, rt, r.ValidateOnly)
			if err == nil && !r.ValidateOnly {
				s.mutated(rc, rt.Count-before)
			}
		}
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		resp.Topics = append(resp.Topics, out)
	}
	return resp, nil
}

func (s *Server) createPartitions(rc *reqCtx, rt kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
	if !validTopicName(rt.Topic) {
		return fmt.Errorf("%w: %q", resolver.ErrInvalidTopic, rt.Topic)
	}
	if resolver.IsInternalTopic(rt.Topic) {
		return internalTopicErr(rt.Topic)
	}
	t, ok := s.res.Topic(rt.Topic)
	if !ok {
		return fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, rt.Topic)
	}
	// Kafka's words for a count that does not grow the topic (the catalog
	// refuses it too, under the lock that orders concurrent growth).
	switch {
	case rt.Count == t.Partitions:
		return kafkaWorded{resolver.ErrInvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", t.Partitions)}
	case rt.Count < t.Partitions:
		return kafkaWorded{resolver.ErrInvalidPartitions, fmt.Sprintf(
			"The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, t.Partitions, rt.Count)}
	}
	if rt.Assignment != nil {
		if want := int(rt.Count - t.Partitions); want > 0 && len(rt.Assignment) != want {
			return fmt.Errorf("%w: %d assignments for %d new partitions", kerr.InvalidReplicaAssignment, len(rt.Assignment), want)
		}
		for _, a := range rt.Assignment {
			if len(a.Replicas) != 1 || a.Replicas[0] != s.cfg.NodeID {
				return fmt.Errorf("%w: new partitions must be on broker %d alone", kerr.InvalidReplicaAssignment, s.cfg.NodeID)
			}
		}
	}
	return s.catalogAs(rc).CreatePartitions(rt.Topic, rt.Count, validateOnly)
}
