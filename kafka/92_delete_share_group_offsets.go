package kafka

// DeleteShareGroupOffsets (key 92), version 0: removes an empty share
// group's state of the named topics, which then start over at
// share.auto.offset.reset.

import "github.com/twmb/franz-go/pkg/kmsg"

func handleDeleteShareGroupOffsets(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareCoordinator()
	if err != nil {
		return nil, err
	}
	return c.DeleteOffsets(req.(*kmsg.DeleteShareGroupOffsetsRequest), topicReadAllowed(rc)), nil
}
