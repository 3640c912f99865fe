package kafka

// ShareAcknowledge (key 79), versions 0–2: acknowledgements of a member's
// share session (kafka/share Q6, Q13); v2 adds IsRenewAck (KIP-1222).

import "github.com/twmb/franz-go/pkg/kmsg"

func handleShareAcknowledge(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareCoordinator()
	if err != nil {
		return nil, err
	}
	return c.Acknowledge(req.(*kmsg.ShareAcknowledgeRequest)), nil
}
