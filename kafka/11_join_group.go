package kafka

// JoinGroup (key 11), versions 0–9.
//
//   v1  rebalance timeout (v0 uses the session timeout).
//   v2  throttle time.
//   v4  MEMBER_ID_REQUIRED on a first join without a member id (KIP-394).
//   v5  group instance id (static members, KIP-345).
//   v6  flexible.
//   v7  protocol type in the response; protocol name nullable.
//   v8  join reason (KIP-800).
//   v9  skip assignment for a static leader that rejoins (KIP-814).
//
// The request blocks until the rebalance completes; as in Kafka, the
// connection's later requests wait behind it (requests in effect one at a time). Left out:
// group.max.size and group.initial.rebalance.delay.ms.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleJoinGroup(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.JoinGroupRequest)
	if s.isShareGroup(r.Group) { // One group-id namespace
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = kerr.GroupIDNotFound.Code, -1
		return resp, nil
	}
	if !s.admitGroup(rc, r.Group) {
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = errGroupBound, -1
		return resp, nil
	}
	return c.JoinGroup(rc.ctx, groupClient(rc), r)
}
