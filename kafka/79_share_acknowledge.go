package kafka

// ShareAcknowledge (key 79), versions 0–2: acknowledgements of a member's
// share session (acknowledgement by the lock holder, share session epochs); v2 adds IsRenewAck (KIP-1222).
// READ on the group is the rule's (kafka/authz), READ on each
// acknowledged topic the coordinator's (per-API authorization).

import (
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleShareAcknowledge(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareFetcher()
	if err != nil {
		return nil, err
	}
	resp := c.Acknowledge(req.(*kmsg.ShareAcknowledgeRequest), sharePrincipal(rc), topicReadAllowed(rc))
	if s.cfg.Cluster != nil {
		share.NameAckLeaders(resp, s.shareCurrentLeader, s.shareNodes())
	}
	return resp, nil
}
