package kafka

// A connection's security state: its TLS handshake and principal (TLS handshake timeouts and certificate reloads, the principal mapping)
// and its SASL exchange (the security rules), kept in a kafka/connauth.State. The
// reader admits each request against this state before decoding it;
// SaslHandshake and SaslAuthenticate handlers change it. Requests in effect one at a time orders them: the reader reads the next frame only
// once the previous request has taken effect, so it always sees the state
// the previous exchange step left.

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/connauth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

const (
	apiKeySaslHandshake    int16 = 17
	apiKeySaslAuthenticate int16 = 36
)

// AuthObserver is implemented by an Observer that counts authentications
// (the failed-authentication delay); kafka/ checks for it so that Observer stays as it is.
type AuthObserver interface {
	// Authentication reports one SASL exchange's outcome on a listener.
	Authentication(listener, mechanism string, ok bool)
}

// handshakeTLS runs a TLS listener's handshake, bounded by the handshake
// timeout (TLS handshake timeouts and certificate reloads), and takes the client certificate's principal (the principal mapping).
func (c *conn) handshakeTLS(ctx context.Context) error {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	tc.SetDeadline(time.Now().Add(c.s.cfg.TLSHandshakeTimeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("tls handshake: %w", err)
	}
	tc.SetDeadline(time.Time{})
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 || c.lis.Protocol.UsesSASL() {
		return nil
	}
	p, err := connauth.CertPrincipal(certs[0], c.lis.PrincipalMapper)
	if err != nil {
		return err
	}
	c.auth.SetPrincipal(p)
	return nil
}

// Principal is the connection's principal (the principal mapping).
func (c *conn) Principal() string { return c.auth.Principal() }

// usesSASL reports whether the connection's listener is a SASL one (a
// connection built without a listener, in tests, is PLAINTEXT).
func (c *conn) usesSASL() bool { return c.lis != nil && c.lis.Protocol.UsesSASL() }

// rawToken reports whether the next frame is a bare SASL token (after a
// SaslHandshake v0).
func (c *conn) rawToken() bool { return c.auth.RawToken() }

// maxFrame is the largest frame the connection may send now (the pre-authentication gate, the frame size limit).
func (c *conn) maxFrame() int32 {
	if !c.usesSASL() {
		return c.s.cfg.MaxRequestBytes
	}
	return c.auth.MaxFrame(c.s.cfg.MaxRequestBytes, c.s.cfg.SASL.MaxReceiveSize)
}

// admit says whether a request with this key may be served now (the pre-authentication gate, KIP-368 re-authentication).
func (c *conn) admit(key int16) error {
	if !c.usesSASL() {
		return nil
	}
	return c.auth.Admit(key)
}

// saslHandshake starts an exchange (SaslHandshake); it fills resp.
func (c *conn) saslHandshake(rc *reqCtx, r *kmsg.SASLHandshakeRequest, resp *kmsg.SASLHandshakeResponse) {
	mech := r.Mechanism
	open := func() (auth.Session, error) {
		client := auth.Client{Addr: auth.SourceKey(c.nc.RemoteAddr()), Budget: c.s.plainBudget, Tokens: c.s.cfg.SASL.Tokens}
		return auth.NewSession(mech, c.s.cfg.SASL.Credentials, client)
	}
	code, refused := c.auth.Handshake(mech, r.Version, c.lis.Enabled(c.s.cfg, mech), open)
	if code == 0 {
		return
	}
	resp.ErrorCode, rc.closeAfter = code, true
	if refused {
		c.log.Info("sasl-handshake-refused", zap.String("listener", c.lis.Name),
			zap.String("mechanism", clip(mech)), zap.Int16("error-code", resp.ErrorCode))
		c.s.observeAuth(c.lis.Name, mech, false)
	}
}

// saslAuthenticate takes one token of the exchange (SaslAuthenticate, or
// a bare token after SaslHandshake v0); it fills resp.
func (c *conn) saslAuthenticate(rc *reqCtx, token []byte, resp *kmsg.SASLAuthenticateResponse) {
	start := time.Now()
	st, ok := c.auth.Authenticate(token, c.s.cfg.SASL.MaxReceiveSize, c.s.cfg.SASL.ReauthAfter)
	switch {
	case !ok:
		resp.ErrorCode = kerr.IllegalSaslState.Code
		rc.closeAfter = true
		return
	case st.Err != nil:
		c.authFailed(rc, resp, st.User, st.Mechanism, start, st.Err)
		return
	}
	resp.SASLAuthBytes = st.Challenge
	if st.Done {
		if st.Lifetime > 0 {
			resp.SessionLifetimeMillis = st.Lifetime.Milliseconds()
		}
		c.log.Debug("sasl-authenticated", zap.String("listener", c.lis.Name),
			zap.String("mechanism", st.Mechanism), zap.String("principal", st.Principal))
		c.s.observeAuth(c.lis.Name, st.Mechanism, true)
	}
}

// authFailed answers a failed exchange (the failed-authentication delay): the failure delay after the
// step began (start), SASL_AUTHENTICATION_FAILED, then the connection
// closes. The message is the same whatever failed, and the log names no
// secret. Counting the delay from the step's start, not from the
// failure, makes a PLAIN check refused by the failed-login budget (no
// derivation) answer when a checked wrong password does.
func (c *conn) authFailed(rc *reqCtx, resp *kmsg.SASLAuthenticateResponse, user, mech string, start time.Time, err error) {
	c.log.Info("sasl-authentication-failed", zap.String("listener", c.lis.Name),
		zap.String("mechanism", mech), zap.String("user", clip(user)), zap.String("reason", err.Error()))
	c.s.observeAuth(c.lis.Name, mech, false)
	if d := time.Until(start.Add(c.s.cfg.SASL.FailedDelay)); c.s.cfg.SASL.FailedDelay > 0 && d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-rc.ctx.Done():
			t.Stop()
		}
	}
	resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
	msg := connauth.FailedMessage(mech)
	resp.ErrorMessage = &msg
	rc.closeAfter = true
}

func (s *Server) observeAuth(listener, mech string, ok bool) {
	if auth.CheckMechanisms([]string{mech}) != nil {
		mech = "other" // a client's made-up name is no metric label
	}
	if o, is := s.cfg.Observer.(AuthObserver); is {
		o.Authentication(listener, mech, ok)
	}
}

func zapUser(u string) zap.Field { return zap.String("user", clip(u)) }

// clip bounds what a client chose (a user or mechanism name) in a log.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}

// zapPrincipal names who made a request, for audit logs.
func zapPrincipal(rc *reqCtx) zap.Field { return zap.String("principal", rc.conn.Principal()) }

// rawAuthenticate turns a bare token (SaslHandshake v0) into a
// SaslAuthenticate request whose answer is written bare (conn.Encode).
func rawAuthenticate(token []byte) *kmsg.SASLAuthenticateRequest {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.SASLAuthBytes = token
	return r
}
