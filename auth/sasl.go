package auth

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
)

// Session is one server-side SASL exchange.
type Session interface {
	// Step takes the client's next token and returns the server's
	// answer; done is true once the client is authenticated. An error
	// fails the exchange (the failed-authentication delay); the session is not used again.
	Step(token []byte) (challenge []byte, done bool, err error)
	// User is the user the client claims (empty before it said), for
	// logs and, once done, the principal.
	User() string
	Mechanism() string
}

// Mechanisms lists every mechanism kgateway implements, in the order
// sasl.enabled.mechanisms defaults to.
var Mechanisms = []string{ScramSHA256, ScramSHA512, Plain}

// CheckMechanisms is nil when every name is implemented.
func CheckMechanisms(names []string) error {
	for _, n := range names {
		if !slices.Contains(Mechanisms, n) {
			return fmt.Errorf("%w: %q (implemented: %v)", ErrUnsupportedMechanism, n, Mechanisms)
		}
	}
	return nil
}

// Client is who runs an exchange: its source address (SourceKey) and the
// failed-login budget PLAIN draws on (nil: unbounded).
type Client struct {
	Addr   string
	Budget *DeriveBudget
	// Tokens are the delegation tokens SCRAM may authenticate (nil:
	// none, token.go).
	Tokens TokenSource
}

// NewSession starts an exchange of mechanism mech against creds, for
// client.
func NewSession(mech string, creds CredentialSource, client Client) (Session, error) {
	if h, ok := scramByName(mech); ok {
		return newScramSession(h, creds, client.Tokens), nil
	}
	if mech == Plain {
		return &plainSession{creds: creds, client: client}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupportedMechanism, mech)
}

// plainSession is PLAIN (RFC 4616), verified against the SCRAM
// credentials of the store: the password must derive the user's stored
// key (the SCRAM credential store), so PLAIN and SCRAM share one set of users.
type plainSession struct {
	creds  CredentialSource
	client Client
	user   string
	done   bool
}

func (p *plainSession) Mechanism() string { return Plain }
func (p *plainSession) User() string      { return p.user }

// dummy is verified against when the user is unknown, so that an unknown
// user costs as much as a wrong password.
var dummy = sync.OnceValue(func() Credential {
	c, _ := deriveCredential(ScramSHA256, []byte("x"), make([]byte, 32), MinIterations)
	return c
})

func (p *plainSession) Step(token []byte) ([]byte, bool, error) {
	if p.done {
		return nil, false, fmt.Errorf("%w: message after the exchange ended", ErrMalformed)
	}
	p.done = true
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, false, fmt.Errorf("%w: PLAIN message is not authzid NUL user NUL password", ErrMalformed)
	}
	authzid, user, password := string(parts[0]), string(parts[1]), parts[2]
	if user == "" || len(password) == 0 {
		return nil, false, fmt.Errorf("%w: empty user or password", ErrMalformed)
	}
	p.user = user
	if authzid != "" && authzid != user {
		return nil, false, fmt.Errorf("%w: authorization id differs from the user", ErrAuthFailed)
	}
	mech, c, err := p.credential(user)
	if err != nil {
		return nil, false, err
	}
	// The budget is claimed for unknown users too, under the claimed
	// name, so that it tells nothing of which users exist.
	r, ok := p.client.Budget.Reserve(p.client.Addr, user)
	if !ok {
		return nil, false, fmt.Errorf("%w: failed-login budget spent", ErrAuthFailed)
	}
	r.Derived()
	if mech == "" {
		verifyPassword(ScramSHA256, dummy(), password)
		return nil, false, fmt.Errorf("%w: unknown user", ErrAuthFailed)
	}
	if !verifyPassword(mech, c, password) {
		return nil, false, fmt.Errorf("%w: wrong password", ErrAuthFailed)
	}
	r.Succeeded()
	return nil, true, nil
}

// credential is user's strongest SCRAM credential (mech "" if none).
func (p *plainSession) credential(user string) (string, Credential, error) {
	for _, mech := range []string{ScramSHA512, ScramSHA256} {
		c, ok, err := p.creds.Lookup(user, mech)
		if err != nil || ok {
			return mech, c, err
		}
	}
	return "", Credential{}, nil
}
