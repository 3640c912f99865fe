package kafka

// DeleteTopics (key 20), versions 0–6.
//
//   v1  throttle time.   v2, v3  nothing new.   v4  flexible.
//   v5  an error message per topic.
//   v6  topics by name or by id.
//
// Deletion removes the binding and every partition's log (resolver).
// In cluster mode the change goes through the shared catalog (Y6).
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
			resp.Topics = append(resp.Topics, s.deleteTopic(&name, resolver.TopicID{}))
		}
		return resp, nil
	}
	for _, rt := range r.Topics {
		resp.Topics = append(resp.Topics, s.deleteTopic(rt.Topic, resolver.TopicID(rt.TopicID)))
	}
	return resp, nil
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
		err = s.catalog().DeleteTopic(n) // an internal topic's name: refused (resolver N2)
	}
	out.ErrorCode = errCode(err)
	out.ErrorMessage = errMessage(err)
	return out
}
