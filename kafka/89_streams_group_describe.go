package kafka

// StreamsGroupDescribe (key 89), versions 0–1 (KIP-1071).
//
//   v1  the topology description when asked (KIP-1331: AVAILABLE or
//       NOT_STORED) and the assignor's name.
//
// With streams.version finalized at 0 every group is UNSUPPORTED_VERSION
// (kafka/featuregate).
// A group that is absent or not a streams group is GROUP_ID_NOT_FOUND,
// as from Kafka. Authorized operations are filled when asked
// (kafka/authz).

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleStreamsGroupDescribe(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.StreamsGroupDescribeRequest)
	return c.StreamsGroupDescribe(r), nil
}
