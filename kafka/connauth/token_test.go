package connauth

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// memTokens is one delegation token, "tok" with password "tok-hmac",
// owned by alice, expiring at expiry.
type memTokens struct {
	c      auth.Credential
	expiry time.Time
}

func (m memTokens) TokenCredential(id, mech string) (auth.Credential, string, time.Time, bool) {
	if id != "tok" || mech != auth.ScramSHA256 {
		return auth.Credential{}, "", time.Time{}, false
	}
	return m.c, "alice", m.expiry, true
}

// tokenLogin runs a SCRAM-SHA-256 exchange of a (franz-go's client) on a
// fresh state and returns it and the last step.
func tokenLogin(t *testing.T, tokens auth.TokenSource, a scram.Auth, reauth time.Duration) (*State, Step) {
	t.Helper()
	var st State
	open := func() (auth.Session, error) {
		return auth.NewSession(auth.ScramSHA256, auth.OpenStore(t.TempDir()), auth.Client{Addr: "test", Tokens: tokens})
	}
	if code, _ := st.Handshake(auth.ScramSHA256, 1, true, open); code != 0 {
		t.Fatalf("handshake: %d", code)
	}
	sess, msg, err := a.AsSha256Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for {
		step, ok := st.Authenticate(msg, 1<<20, reauth)
		if !ok || step.Err != nil || step.Done {
			return &st, step
		}
		if _, msg, err = sess.Challenge(step.Challenge); err != nil {
			t.Fatal(err)
		}
	}
}

// KIP-48: SCRAM with tokenauth=true authenticates the token's HMAC as
// its owner, marks the connection token-authenticated and ends a
// session that must re-authenticate with the token (KIP-368); the same
// name and password without the extension, or a wrong password, fail.
func TestTokenAuthentication(t *testing.T) {
	c, err := auth.NewCredential(auth.ScramSHA256, []byte("tok-hmac"), auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	tokens := memTokens{c: c, expiry: time.Now().Add(time.Minute)}
	st, step := tokenLogin(t, tokens, scram.Auth{User: "tok", Pass: "tok-hmac", IsToken: true}, time.Hour)
	if step.Err != nil || !step.Done {
		t.Fatalf("token login: %v", step.Err)
	}
	if st.Principal() != "User:alice" || !st.TokenAuthenticated() {
		t.Fatalf("principal %q token-authenticated %v, want User:alice, true", st.Principal(), st.TokenAuthenticated())
	}
	if step.Lifetime > time.Minute || step.Lifetime < time.Second {
		t.Fatalf("session lifetime %v, want the token's minute", step.Lifetime)
	}
	if _, step = tokenLogin(t, tokens, scram.Auth{User: "tok", Pass: "tok-hmac"}, 0); step.Err == nil {
		t.Fatal("the token authenticated without tokenauth=true")
	}
	if _, step = tokenLogin(t, tokens, scram.Auth{User: "tok", Pass: "wrong", IsToken: true}, 0); step.Err == nil {
		t.Fatal("a wrong HMAC authenticated")
	}
	if _, step = tokenLogin(t, nil, scram.Auth{User: "tok", Pass: "tok-hmac", IsToken: true}, 0); step.Err == nil {
		t.Fatal("a token authenticated without a token source")
	}
}
