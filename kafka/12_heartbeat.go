package kafka

// Heartbeat (key 12), versions 0–4.
//
//   v1  throttle time.
//   v3  group instance id (FENCED_INSTANCE_ID for a replaced static member).
//   v4  flexible.
//
// REBALANCE_IN_PROGRESS tells a member to rejoin. Left out: nothing.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleHeartbeat(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.Heartbeat(req.(*kmsg.HeartbeatRequest)), nil
}
