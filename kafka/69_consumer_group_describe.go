package kafka

// ConsumerGroupDescribe (key 69), versions 0–1 (KIP-848).
//
//   v1  member type.
//
// A group that is absent or not a consumer group is GROUP_ID_NOT_FOUND,
// as from Kafka. Authorized operations are filled when asked
// (kafka/authz, per-API authorization).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleConsumerGroupDescribe(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.ConsumerGroupDescribe(req.(*kmsg.ConsumerGroupDescribeRequest)), nil
}
