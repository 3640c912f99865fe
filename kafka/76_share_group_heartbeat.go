package kafka

// ShareGroupHeartbeat (key 76), versions 0–1 (KIP-932; v1 changes nothing
// on the wire): share-group membership and the assignment the coordinator
// computes (one group-id namespace, share member epochs and share assignment).

import (
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleShareGroupHeartbeat(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareCoordinator()
	if err != nil {
		return nil, err
	}
	r := req.(*kmsg.ShareGroupHeartbeatRequest)
	if !s.admitGroup(rc, r.GroupID) {
		resp := r.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = errGroupBound
		return resp, nil
	}
	cl := groupClient(rc)
	return c.Heartbeat(share.Client{ID: cl.ID, Host: cl.Host, Principal: sharePrincipal(rc)}, req.(*kmsg.ShareGroupHeartbeatRequest)), nil
}
