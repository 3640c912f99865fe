package connauth

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// API keys the state machine admits before authentication.
const (
	apiKeySaslHandshake    int16 = 17
	apiKeyApiVersions      int16 = 18
	apiKeySaslAuthenticate int16 = 36
)

// State is a connection's security state. The zero value is a
// connection that has not authenticated, with the anonymous principal.
type State struct {
	mu            sync.Mutex
	principal     string // The principal mapping
	authenticated bool   // a SASL exchange succeeded
	tokenAuth     bool   // with a delegation token (KIP-48)
	failed        bool   // an exchange failed: the connection is closing
	mechanism     string // of the current or last exchange
	session       auth.Session
	exchanging    bool      // a SaslHandshake started an exchange not yet done
	raw           bool      // SaslHandshake v0: tokens come as bare frames
	expiry        time.Time // when the session ends (KIP-368 re-authentication); zero: never
}

// ErrNotAdmitted closes a connection whose request its state refuses (the pre-authentication gate).
var ErrNotAdmitted = errors.New("kafka: request refused by the connection's authentication state")

// Principal is the connection's principal (the principal mapping): the authenticated user's
// or the client certificate's, else auth.Anonymous.
func (a *State) Principal() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.principal == "" {
		return auth.Anonymous
	}
	return a.principal
}

// SetPrincipal sets the principal a TLS client certificate maps to (the principal mapping).
func (a *State) SetPrincipal(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.principal = p
}

// RawToken reports whether the next frame is a bare SASL token (after a
// SaslHandshake v0).
func (a *State) RawToken() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.raw
}

// MaxFrame is the largest frame a SASL connection may send now (the pre-authentication gate, the frame size limit):
// maxReceive (sasl.server.max.receive.size) until it has authenticated,
// and while it sends bare tokens, then maxRequest.
func (a *State) MaxFrame(maxRequest, maxReceive int32) int32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.authenticated && !a.raw {
		return maxRequest
	}
	return min(maxRequest, maxReceive)
}

// Admit says whether a SASL connection may be served a request with this
// key now (the pre-authentication gate, KIP-368 re-authentication): ApiVersions always, the exchange's requests in
// order, anything else only once authenticated and before the session
// expires; nothing once an exchange failed.
func (a *State) Admit(key int16) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.failed:
		return fmt.Errorf("%w: authentication failed", ErrNotAdmitted)
	case key == apiKeyApiVersions:
		return nil
	case key == apiKeySaslHandshake:
		if a.exchanging {
			return fmt.Errorf("%w: SaslHandshake during an exchange", ErrNotAdmitted)
		}
		return nil
	case key == apiKeySaslAuthenticate:
		if !a.exchanging {
			return fmt.Errorf("%w: SaslAuthenticate without SaslHandshake", ErrNotAdmitted)
		}
		return nil
	case !a.authenticated:
		return fmt.Errorf("%w: %s before authentication", ErrNotAdmitted, apiName(key))
	case !a.expiry.IsZero() && time.Now().After(a.expiry):
		return fmt.Errorf("%w: session expired (connections.max.reauth.ms)", ErrNotAdmitted)
	}
	return nil
}

// Handshake starts an exchange with mechanism mech (SaslHandshake at
// version): 0 when it started, else the error code, and the connection
// has failed. refused is true when the request was refused (a mechanism
// not enabled on the listener, or a re-authentication that changes the
// mechanism or uses v0: KIP-368 re-authentication); false with a code when open, which makes
// the mechanism's session, failed.
func (a *State) Handshake(mech string, version int16, enabled bool, open func() (auth.Session, error)) (code int16, refused bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case !enabled:
		code = kerr.UnsupportedSaslMechanism.Code
	case a.authenticated && (mech != a.mechanism || version == 0):
		// KIP-368 re-authentication: re-authentication keeps the mechanism, and needs v1.
		code = kerr.IllegalSaslState.Code
	}
	if code != 0 {
		a.failed = true
		return code, true
	}
	sess, err := open()
	if err != nil { // enabled mechanisms are implemented (Validate)
		a.failed = true
		return kerr.UnsupportedSaslMechanism.Code, false
	}
	a.session, a.mechanism, a.exchanging, a.raw = sess, mech, true, version == 0
	return 0, false
}

// Step is the outcome of one token of an exchange.
type Step struct {
	// Challenge is the server's answer to the token.
	Challenge []byte
	// Done: the exchange succeeded and Principal is authenticated.
	Done bool
	// User and Mechanism name the exchange, for logs and metrics.
	User, Mechanism, Principal string
	// Lifetime is the session's lifetime once Done, 0 for unbounded (KIP-368 re-authentication).
	Lifetime time.Duration
	// Err: the exchange failed and the connection is failed (the failed-authentication delay).
	Err error
}

// Authenticate takes one token of the exchange (SaslAuthenticate, or a
// bare token after SaslHandshake v0). ok is false when no exchange is
// under way (ILLEGAL_SASL_STATE). A token over maxReceive bytes fails
// the exchange; a re-authentication must keep the principal (KIP-368 re-authentication); once
// done, a positive reauthAfter bounds the session (connections.max.reauth.ms).
func (a *State) Authenticate(token []byte, maxReceive int32, reauthAfter time.Duration) (st Step, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.exchanging {
		return Step{}, false
	}
	var err error
	if len(token) > int(maxReceive) {
		err = fmt.Errorf("%w: token of %d bytes", auth.ErrMalformed, len(token))
	} else {
		st.Challenge, st.Done, err = a.session.Step(token)
	}
	st.User, st.Mechanism = a.session.User(), a.mechanism
	st.Principal = auth.UserPrincipal(st.User)
	ts, _ := a.session.(auth.TokenSession)
	owner, tokenExpiry, byToken := tokenOwner(ts)
	if byToken {
		st.Principal = auth.UserPrincipal(owner) // the token's owner (KIP-48)
	}
	if err == nil && st.Done && a.authenticated && st.Principal != a.principal {
		err = fmt.Errorf("%w: re-authentication as another principal", auth.ErrAuthFailed)
	}
	if err != nil {
		a.failed, a.exchanging, a.session = true, false, nil
		st.Challenge, st.Done, st.Err = nil, false, err
		return st, true
	}
	if st.Done {
		a.authenticated, a.principal, a.tokenAuth = true, st.Principal, byToken
		a.exchanging, a.raw, a.session = false, false, nil
		if reauthAfter > 0 {
			st.Lifetime = reauthAfter
			if until := time.Until(tokenExpiry); byToken && until < reauthAfter {
				st.Lifetime = max(until, time.Millisecond) // ends with the token, as Kafka's credential lifetime
			}
			a.expiry = time.Now().Add(st.Lifetime)
		}
	}
	return st, true
}

// TokenAuthenticated reports whether the connection authenticated with a
// delegation token (KIP-48): such a connection may not manage tokens.
func (a *State) TokenAuthenticated() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tokenAuth
}

func tokenOwner(ts auth.TokenSession) (string, time.Time, bool) {
	if ts == nil {
		return "", time.Time{}, false
	}
	return ts.TokenOwner()
}

// apiName is the label of a key in errors.
func apiName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return "Unknown"
}
