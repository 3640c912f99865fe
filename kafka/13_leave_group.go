package kafka

// LeaveGroup (key 13), versions 0–5.
//
//   v1  throttle time.
//   v3  a batch of members, by member id or group instance id (KIP-345).
//   v4  flexible.
//   v5  leave reason (KIP-800).
//
// Before v3 a member's error is the top-level error. Left out: nothing.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleLeaveGroup(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.LeaveGroup(req.(*kmsg.LeaveGroupRequest)), nil
}
