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

	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
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
		if err = topicadmin.Repeated(seen, rt.Topic); err != nil {
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
	if !topicadmin.ValidName(rt.Topic) {
		return fmt.Errorf("%w: %q", resolver.ErrInvalidTopic, rt.Topic)
	}
	if resolver.IsInternalTopic(rt.Topic) {
		return internalTopicErr(rt.Topic)
	}
	return topicadmin.Grow(s.catalogAs(rc), s.res, s.cfg.NodeID, rt, validateOnly)
}
