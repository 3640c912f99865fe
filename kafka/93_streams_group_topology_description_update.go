package kafka

// StreamsGroupTopologyDescriptionUpdate (key 93), version 0 (KIP-1331):
// a streams member's topology description, kept in its group's state
// (kafka/group, kafka/streams description.go). READ on the group.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleStreamsGroupTopologyDescriptionUpdate(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.coordinator()
	if err != nil {
		return nil, err
	}
	return c.StreamsGroupTopologyDescriptionUpdate(tenantOf(rc), req.(*kmsg.StreamsGroupTopologyDescriptionUpdateRequest)), nil
}
