package kafka

// AlterShareGroupOffsets (key 91), version 0: the share-partition start
// offsets of an empty share group (NON_EMPTY_GROUP otherwise).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleAlterShareGroupOffsets(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareCoordinator()
	if err != nil {
		return nil, err
	}
	return c.AlterOffsets(req.(*kmsg.AlterShareGroupOffsetsRequest), topicReadAllowed(rc)), nil
}
