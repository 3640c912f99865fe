package kafka

// ConsumerGroupHeartbeat (key 68), versions 0–1 (KIP-848).
//
//   v0  the consumer protocol: member epochs, server-side assignment.
//   v1  the client names its member id; subscription by regex (RE2,
//       resolved here, server-side regex subscriptions).
//
// The coordinator (the KIP-848 consumer group rules) answers once the change is
// durable. Left out: classic members inside a consumer group (online
// migration); a group changes type only while empty.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleConsumerGroupHeartbeat(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.ConsumerGroupHeartbeatRequest)
	if s.isShareGroup(r.Group) { // One group-id namespace: the id is a share group's
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		msg := "group " + r.Group + " is a share group"
		resp.ErrorMessage = &msg
		return resp, nil
	}
	if !s.admitGroup(rc, r.Group) {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = errGroupBound
		return resp, nil
	}
	return c.ConsumerGroupHeartbeat(groupClient(rc), r), nil
}
