package kafka

// SaslAuthenticate (key 36), versions 0–2.
//
//   v0  the token and the server's answer.
//   v1  session lifetime (KIP-368, KIP-368 re-authentication).
//   v2  flexible.
//
// One step of the exchange a SaslHandshake v1 began. A failure answers
// SASL_AUTHENTICATION_FAILED after connection.failed.authentication.delay.ms
// and closes the connection (the failed-authentication delay). A listener without SASL, or a
// connection with no exchange begun, answers ILLEGAL_SASL_STATE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleSaslAuthenticate(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.SASLAuthenticateRequest)
	resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if !rc.conn.usesSASL() {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}
	rc.conn.saslAuthenticate(rc, r.SASLAuthBytes, resp)
	return resp, nil
}
