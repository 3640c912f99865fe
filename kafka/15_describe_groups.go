package kafka

// DescribeGroups (key 15), versions 0–5.
//
//   v1  throttle time.
//   v3  authorized operations, filled when asked (authz_groups.go, A11).
//   v4  member group instance ids.
//   v5  flexible.
//
// An unknown group is described as Dead with no error. Member metadata and
// assignments are returned for Stable groups only, as Kafka does. Left
// out: ACL operations, v6 GROUP_ID_NOT_FOUND (KIP-1043).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleDescribeGroups(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.DescribeGroups(req.(*kmsg.DescribeGroupsRequest)), nil
}
