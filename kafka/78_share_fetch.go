package kafka

// ShareFetch (key 78), versions 0–2: acknowledgements, then records
// acquired for the member from its share session's partitions (kafka/share
// the KIP-932 share group rules, share session epochs). v1 adds MaxRecords, BatchSize and the acquisition lock
// timeout; v2 the acquire mode and IsRenewAck (KIP-1222). Records are read
// with the resolver's cursorless Fetch (R1); only the offset store is
// written. In batch-optimized mode (ShareAcquireMode 0, and v0–v1) a batch
// begun below MaxRecords is acquired whole; record-limit mode (1) acquires
// at most MaxRecords; BatchSize does not split the acquired ranges. The
// records are read leased and written by reference (kafka/fetchwire), as
// Fetch's.

import (
	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleShareFetch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c, err := s.shareFetcher()
	if err != nil {
		return nil, err
	}
	wire := fetchwire.New(resolver.NewLease(false)) // written from the checked buffers, never sendfile
	resp := c.FetchInto(rc.ctx, req.(*kmsg.ShareFetchRequest), sharePrincipal(rc), topicReadAllowed(rc), wire)
	if s.cfg.Cluster != nil {
		share.NameFetchLeaders(resp, s.shareCurrentLeader, s.shareNodes())
	}
	return &shareResponse{resp, wire}, nil
}

// topicReadAllowed is the per-topic READ check of the share requests
// (per-API authorization), nil without an authorizer.
func topicReadAllowed(rc *reqCtx) share.Allowed {
	if rc.conn.s.cfg.Authorizer == nil {
		return nil
	}
	return share.Allowed(topicAllowed(rc, auth.OpRead))
}

// sharePrincipal is the caller's principal a share member is bound to
// (kafka/share), "" without an authorizer.
func sharePrincipal(rc *reqCtx) string {
	if rc.conn.s.cfg.Authorizer == nil {
		return ""
	}
	return rc.conn.Principal()
}
