package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// handleDelegationToken serves keys 38-41 (KIP-48) by kafka/token.
func handleDelegationToken(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	return s.cfg.SASL.Tokens.Serve(rc.conn.Principal(), rc.conn.auth.TokenAuthenticated(), rc.allowed, req), nil
}
