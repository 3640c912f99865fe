package kafka

import (
	"github.com/kgateway/kgateway/kafka/token"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDelegationToken serves keys 38-41 (KIP-48) by kafka/token.
func handleDelegationToken(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	c := token.Caller{Principal: rc.conn.Principal(), TokenAuthenticated: rc.conn.auth.TokenAuthenticated(), Allowed: rc.allowed}
	return s.cfg.SASL.Tokens.Serve(c, req), nil
}
