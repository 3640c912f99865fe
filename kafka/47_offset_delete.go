package kafka

// OffsetDelete (key 47), version 0.
//
//   v0  delete a group's committed offsets for some partitions (KIP-496).
//
// An Empty group loses them; a live consumer group keeps the offsets of
// topics its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC). Left out:
// nothing.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleOffsetDelete(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.OffsetDelete(req.(*kmsg.OffsetDeleteRequest)), nil
}
