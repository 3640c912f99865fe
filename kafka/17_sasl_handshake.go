package kafka

// SaslHandshake (key 17), versions 0–1.
//
//   v0  the tokens that follow are bare size-prefixed frames.
//   v1  the tokens that follow are SaslAuthenticate requests (KIP-152).
//
// Answers the mechanisms enabled on the connection's listener. A
// mechanism not enabled gets UNSUPPORTED_SASL_MECHANISM and the
// connection closes; a listener without SASL answers ILLEGAL_SASL_STATE
// (the pre-authentication gate). On an authenticated connection a handshake begins a
// re-authentication (KIP-368 re-authentication).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleSaslHandshake(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.SASLHandshakeRequest)
	resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
	l := rc.conn.lis
	if !rc.conn.usesSASL() {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}
	resp.SupportedMechanisms = l.EnabledMechanisms(s.cfg)
	rc.conn.saslHandshake(rc, r, resp)
	return resp, nil
}
