package kafka

// DescribeGroups (key 15), versions 0–6.
//
//   v1  throttle time.
//   v3  authorized operations, filled when asked (kafka/authz, per-API authorization).
//   v4  member group instance ids.
//   v5  flexible.
//   v6  an unknown group, or one that is not classic, is GROUP_ID_NOT_FOUND
//       with an error message (KIP-1043); before, it is Dead with no error.
//
// Member metadata and assignments are returned for Stable groups only, as
// Kafka does.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeGroups(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	resp := c.DescribeGroups(req.(*kmsg.DescribeGroupsRequest))
	// A share group lives in the share coordinator: to the classic API it
	// is a group of another type, as Kafka words it.
	for i := range resp.Groups {
		if g := &resp.Groups[i]; g.ErrorCode == kerr.GroupIDNotFound.Code && s.isShareGroup(g.Group) {
			msg := fmt.Sprintf("Group %s is not a classic group.", g.Group)
			g.ErrorMessage = &msg
		}
	}
	return resp, nil
}
