package kafka

// DeleteTopics (key 20), versions 0–6.
//
//   v1  throttle time.   v2, v3  nothing new.   v4  flexible.
//   v5  an error message per topic.
//   v6  topics by name or by id.
//
// Deletion removes the binding and every partition's log (resolver).
// In cluster mode the change goes through the shared catalog (topic changes through the catalog).
// Left out: request timeouts (deletion is synchronous).

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDeleteTopics(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DeleteTopicsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	if r.Version < 6 {
		for _, name := range r.TopicNames {
			resp.Topics = append(resp.Topics, s.deleteTopicQuota(rc, &name, resolver.TopicID{}))
		}
		return resp, nil
	}
	for _, rt := range r.Topics {
		resp.Topics = append(resp.Topics, s.deleteTopicQuota(rc, rt.Topic, resolver.TopicID(rt.TopicID)))
	}
	return resp, nil
}

// deleteTopicQuota is deleteTopic under controller_mutation_rate
// (KIP-599): refused in debt from v5, else its partitions are counted.
func (s *Server) deleteTopicQuota(rc *reqCtx, name *string, id resolver.TopicID) kmsg.DeleteTopicsResponseTopic {
	if err := s.mutationRefused(rc); err != nil {
		out := kmsg.NewDeleteTopicsResponseTopic()
		out.Topic, out.TopicID = name, id
		if name == nil {
			if n, _, ok := s.topicByID(id); ok {
				out.Topic = &n
			}
		}
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		return out
	}
	var parts int32
	if name != nil {
		if t, ok := s.res.Topic(*name); ok {
			parts = t.Partitions
		}
	} else if n, _, ok := s.topicByID(id); ok {
		if t, ok := s.res.Topic(n); ok {
			parts = t.Partitions
		}
	}
	out := s.deleteTopic(name, id)
	if out.ErrorCode == 0 {
		s.mutated(rc, parts)
	}
	return out
}

// deleteTopic deletes by name, or by id when name is nil.
func (s *Server) deleteTopic(name *string, id resolver.TopicID) kmsg.DeleteTopicsResponseTopic {
	out := kmsg.NewDeleteTopicsResponseTopic()
	var err error
	switch {
	case name != nil:
		n := *name
		out.Topic = &n
		if t, ok := s.res.Topic(n); ok {
			out.TopicID = t.ID
		}
		err = s.catalog().DeleteTopic(n)
	default:
		out.TopicID = id
		n, _, ok := s.topicByID(id)
		if !ok {
			err = fmt.Errorf("%w: %s", kerr.UnknownTopicID, id)
			break
		}
		out.Topic = &n
		err = s.catalog().DeleteTopic(n) // an internal topic's name: refused (reserved internal topic names)
	}
	out.ErrorCode = errCode(err)
	out.ErrorMessage = errMessage(err)
	return out
}
