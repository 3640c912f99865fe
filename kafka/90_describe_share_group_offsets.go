package kafka

// DescribeShareGroupOffsets (key 90), versions 0–1: each partition's
// share-partition start offset; v1 adds the lag.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeShareGroupOffsets(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareCoordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	var allowed share.Allowed
	if s.cfg.Authorizer != nil {
		allowed = share.Allowed(topicAllowed(rc, auth.OpDescribe))
	}
	for _, g := range r.Groups {
		resp.Groups = append(resp.Groups, c.DescribeOffsets(g, allowed))
	}
	return resp, nil
}
