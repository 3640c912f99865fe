package kafka

// ShareGroupDescribe (key 77), versions 0–1: a share group's state, epochs,
// assignor ("simple") and members with their assignments. An unknown
// group, or one of another type, is GROUP_ID_NOT_FOUND.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleShareGroupDescribe(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareCoordinator()
	if err != nil {
		return nil, err
	}
	return c.Describe(req.(*kmsg.ShareGroupDescribeRequest)), nil
}
