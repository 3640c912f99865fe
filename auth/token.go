package auth

// Delegation token authentication (KIP-48): a SCRAM exchange whose
// client-first message carries the extension tokenauth=true names a
// token id as its user and proves the token's HMAC (base64) as its
// password. The credential comes from the token store, not the user
// store, and the connection's principal is the token's owner, marked as
// token-authenticated (such a connection may not create or renew tokens).

import (
	"strings"
	"time"
)

// TokenSource looks up delegation tokens for SCRAM token authentication.
type TokenSource interface {
	// TokenCredential returns the SCRAM credential of token id for mech
	// (derived from the token's HMAC), the owner's user name and when
	// the token expires; ok is false for a token unknown, expired or
	// with tokens disabled.
	TokenCredential(id, mech string) (c Credential, owner string, expiry time.Time, ok bool)
}

// TokenSession is implemented by a session that may authenticate a
// delegation token: once done, owner is the principal's user name, and
// expiry bounds a session that must re-authenticate (KIP-368), as
// Kafka's credential lifetime does.
type TokenSession interface {
	TokenOwner() (owner string, expiry time.Time, ok bool)
}

// tokenAuth reports whether a client-first message's extensions ask for
// token authentication (Kafka's ScramExtensions: tokenauth, "true" in any
// case).
func tokenAuth(extensions []attr) bool {
	for _, a := range extensions {
		if k, v, _ := strings.Cut(a.raw, "="); k == "tokenauth" && strings.EqualFold(v, "true") {
			return true
		}
	}
	return false
}

// TokenOwner is the owner of the token the session authenticated ("",
// false for a user's exchange).
func (s *scramSession) TokenOwner() (string, time.Time, bool) {
	return s.owner, s.expiry, s.token
}

// lookup is the credential the exchange checks: the user's, or with
// token authentication the token's.
func (s *scramSession) lookup(user string, token bool) (Credential, bool, error) {
	if !token {
		return s.creds.Lookup(user, s.h.name)
	}
	if s.tokens == nil {
		return Credential{}, false, nil
	}
	c, owner, expiry, ok := s.tokens.TokenCredential(user, s.h.name)
	if ok {
		s.owner, s.expiry, s.token = owner, expiry, true
	}
	return c, ok, nil
}
