package connauth

import (
	"errors"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
)

// plainOpen opens PLAIN sessions against a real
// credential store holding alice (alice-pw) and bob (bob-pw).
func plainOpen(t *testing.T) func() (auth.Session, error) {
	t.Helper()
	store := auth.OpenStore(t.TempDir())
	for _, u := range []string{"alice", "bob"} {
		c, err := auth.NewCredential(auth.ScramSHA256, []byte(u+"-pw"), auth.MinIterations)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.SetCredential(u, auth.ScramSHA256, c); err != nil {
			t.Fatal(err)
		}
	}
	return func() (auth.Session, error) { return auth.NewSession(auth.Plain, store, auth.Client{Addr: "test"}) }
}

func plainToken(user string) []byte { return []byte("\x00" + user + "\x00" + user + "-pw") }

// The pre-authentication gate: before authenticating, a SASL connection may send only ApiVersions
// and the exchange, in order, with frames bounded by the receive size;
// after, anything, with frames bounded by the request size; KIP-368 re-authentication: a
// re-authentication keeps the principal, and the session expires.
func TestStateExchange(t *testing.T) {
	open := plainOpen(t)
	var a State
	if a.Principal() != auth.Anonymous {
		t.Fatalf("principal before login %q", a.Principal())
	}
	for key, ok := range map[int16]bool{18: true, 17: true, 36: false, 3: false} {
		if err := a.Admit(key); (err == nil) != ok {
			t.Fatalf("key %d before the handshake: %v", key, err)
		}
	}
	if n := a.MaxFrame(1<<20, 512); n != 512 {
		t.Fatalf("frame bound before login %d", n)
	}
	if code, _ := a.Handshake(auth.Plain, 1, true, open); code != 0 {
		t.Fatalf("handshake: %d", code)
	}
	if a.Admit(17) == nil || a.Admit(36) != nil || a.Admit(3) == nil {
		t.Fatal("admitted out of order during the exchange")
	}
	st, ok := a.Authenticate(plainToken("alice"), 512, time.Hour)
	if !ok || st.Err != nil || !st.Done || st.Principal != "User:alice" || st.Lifetime != time.Hour {
		t.Fatalf("alice's login: %+v, %v", st, ok)
	}
	if a.Admit(3) != nil || a.Principal() != "User:alice" || a.MaxFrame(1<<20, 512) != 1<<20 {
		t.Fatal("not logged in after the exchange")
	}
	// KIP-368 re-authentication: re-authentication as another principal fails the connection.
	if code, _ := a.Handshake(auth.Plain, 1, true, open); code != 0 {
		t.Fatalf("re-authentication handshake: %d", code)
	}
	st, _ = a.Authenticate(plainToken("bob"), 512, time.Hour)
	if !errors.Is(st.Err, auth.ErrAuthFailed) {
		t.Fatalf("re-authentication as bob: %+v", st)
	}
	if a.Admit(18) == nil {
		t.Fatal("a failed connection admitted ApiVersions")
	}
}

// KIP-368 re-authentication: re-authentication keeps the mechanism and needs SaslHandshake v1;
// a mechanism the listener does not enable is refused; both fail the
// connection.
func TestStateHandshakeRefused(t *testing.T) {
	open := plainOpen(t)
	var a State
	if code, refused := a.Handshake("GSSAPI", 1, false, open); code != kerr.UnsupportedSaslMechanism.Code || !refused {
		t.Fatalf("disabled mechanism: %d %v", code, refused)
	}
	var b State
	b.Handshake(auth.Plain, 1, true, open)
	if st, _ := b.Authenticate(plainToken("alice"), 512, 0); !st.Done || st.Lifetime != 0 {
		t.Fatalf("login: %+v", st)
	}
	if code, refused := b.Handshake(auth.Plain, 0, true, open); code != kerr.IllegalSaslState.Code || !refused {
		t.Fatalf("re-authentication at v0: %d %v", code, refused)
	}
	if b.Admit(3) == nil {
		t.Fatal("a refused re-authentication left the connection serving")
	}
	var c State
	if _, ok := c.Authenticate(plainToken("alice"), 512, 0); ok {
		t.Fatal("a token without a handshake was taken")
	}
	c.Handshake(auth.Plain, 0, true, open)
	if !c.RawToken() {
		t.Fatal("SaslHandshake v0 does not expect a bare token")
	}
	if st, _ := c.Authenticate(make([]byte, 600), 512, 0); !errors.Is(st.Err, auth.ErrMalformed) {
		t.Fatalf("oversized token: %+v", st)
	}
}
