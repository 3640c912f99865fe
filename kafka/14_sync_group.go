package kafka

// SyncGroup (key 14), versions 0–5.
//
//   v1  throttle time.
//   v3  group instance id.
//   v4  flexible.
//   v5  protocol type and name, checked and echoed.
//
// A follower's request blocks until the leader's SyncGroup delivers the
// assignment or a new rebalance overtakes it (REBALANCE_IN_PROGRESS).
// Left out: nothing.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleSyncGroup(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.SyncGroup(rc.ctx, req.(*kmsg.SyncGroupRequest))
}
