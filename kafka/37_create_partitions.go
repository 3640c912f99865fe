package kafka

// CreatePartitions (key 37), versions 0–3.
//
//   v1  nothing new.     v2  flexible.   v3  nothing new.
//
// Grows a topic to Count partitions (the resolver refuses to shrink:
// INVALID_PARTITIONS); a manual assignment must put each new partition on
// this broker alone. validate_only changes nothing; a topic listed twice is
// INVALID_REQUEST.
// Left out: timeouts (growth is synchronous).

import (
	"fmt"

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
		var err error
		if seen[rt.Topic] > 1 {
			err = fmt.Errorf("%w: topic %q is listed more than once", kerr.InvalidRequest, rt.Topic)
		} else {
			err = s.createPartitions(rt, r.ValidateOnly)
		}
		out := kmsg.NewCreatePartitionsResponseTopic()
		out.Topic = rt.Topic
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		resp.Topics = append(resp.Topics, out)
	}
	return resp, nil
}

func (s *Server) createPartitions(rt kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
	for _, a := range rt.Assignment {
		if len(a.Replicas) != 1 || a.Replicas[0] != s.cfg.NodeID {
			return fmt.Errorf("%w: new partitions must be on broker %d alone", kerr.InvalidReplicaAssignment, s.cfg.NodeID)
		}
	}
	return s.res.CreatePartitions(rt.Topic, rt.Count, validateOnly)
}
