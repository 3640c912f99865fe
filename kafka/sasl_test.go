package kafka

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// authCounter is an Observer that counts authentications (the failed-authentication delay).
type authCounter struct {
	mu      sync.Mutex
	ok, bad int
}

func (*authCounter) Request(string, int, time.Duration) {}
func (*authCounter) Response(string, int)               {}
func (*authCounter) ProduceBytes(string, int)           {}
func (*authCounter) FetchBytes(string, int)             {}
func (a *authCounter) Authentication(_, _ string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ok {
		a.ok++
	} else {
		a.bad++
	}
}

func (a *authCounter) counts() (int, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ok, a.bad
}

// saslServer serves a SASL_PLAINTEXT listener with PLAIN and both SCRAM
// mechanisms, and users alice and bob (passwords alice-pw and bob-pw).
func saslServer(t *testing.T, cfg Config) (*Server, net.Addr) {
	t.Helper()
	store := auth.OpenStore(t.TempDir())
	for _, u := range []string{"alice", "bob"} {
		for _, m := range []string{auth.ScramSHA256, auth.ScramSHA512} {
			c, err := auth.NewCredential(m, []byte(u+"-pw"), auth.MinIterations)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.SetCredential(u, m, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg.SASL.Credentials = store
	cfg.SASL.Mechanisms = []string{auth.Plain, auth.ScramSHA256, auth.ScramSHA512}
	if cfg.SASL.FailedDelay == 0 {
		cfg.SASL.FailedDelay = -1
	}
	return startListener(t, cfg, Listener{Name: "SASL_PLAINTEXT", Protocol: SASLPlaintext})
}

// handshake sends SaslHandshake v1 for mech and returns the answer.
func (c *rawConn) handshake(corr int32, mech string) *kmsg.SASLHandshakeResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = 1, mech
	c.send(corr, req)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.Version = 1
	c.recv(resp)
	return resp
}

// authenticate sends one SaslAuthenticate v2 token and returns the answer.
func (c *rawConn) authenticate(corr int32, token []byte) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = 2, token
	c.send(corr, req)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	c.recv(resp)
	return resp
}

// scramLogin runs a whole SCRAM-SHA-256 exchange as user with password
// and returns the last answer.
func (c *rawConn) scramLogin(user, password string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	if hs := c.handshake(1, auth.ScramSHA256); hs.ErrorCode != 0 {
		c.t.Fatalf("handshake: %v", kerr.ErrorForCode(hs.ErrorCode))
	}
	sess, first, err := scram.Auth{User: user, Pass: password}.AsSha256Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		c.t.Fatal(err)
	}
	resp := c.authenticate(2, first)
	if resp.ErrorCode != 0 {
		return resp
	}
	_, final, err := sess.Challenge(resp.SASLAuthBytes)
	if err != nil {
		c.t.Fatal(err)
	}
	resp = c.authenticate(3, final)
	if resp.ErrorCode == 0 {
		if done, _, err := sess.Challenge(resp.SASLAuthBytes); !done || err != nil {
			c.t.Fatalf("server-final not accepted: %v", err)
		}
	}
	return resp
}

// describeUsers sends DescribeUserScramCredentials, a request that needs
// an authenticated connection, and returns the answer.
func (c *rawConn) describeUsers(corr int32) *kmsg.DescribeUserSCRAMCredentialsResponse {
	c.t.Helper()
	c.send(corr, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	c.recv(resp)
	return resp
}

// The pre-authentication gate: before authentication only ApiVersions and SaslHandshake are
// served; anything else closes the connection, as does SaslAuthenticate
// without a handshake.
func TestSASLRequestBeforeAuthentication(t *testing.T) {
	_, addr := saslServer(t, Config{})
	c := dialRaw(t, addr)
	c.send(1, kmsg.NewPtrApiVersionsRequest())
	c.recv(kmsg.NewPtrApiVersionsResponse())
	c.send(2, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	c.expectClosed()

	c = dialRaw(t, addr)
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SASLAuthBytes = []byte("n,,n=alice,r=abc")
	c.send(1, req)
	c.expectClosed()

	// Authenticated, the same request is served.
	c = dialRaw(t, addr)
	if resp := c.scramLogin("alice", "alice-pw"); resp.ErrorCode != 0 {
		t.Fatalf("login: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := c.describeUsers(4); resp.ErrorCode != 0 || len(resp.Results) != 2 {
		t.Fatalf("after login: %+v", resp)
	}
}

// The pre-authentication gate: a mechanism that is not enabled gets UNSUPPORTED_SASL_MECHANISM
// with the enabled ones, then the connection closes. A listener without
// SASL answers ILLEGAL_SASL_STATE and stays open.
func TestSASLUnsupportedMechanism(t *testing.T) {
	_, addr := saslServer(t, Config{})
	c := dialRaw(t, addr)
	resp := c.handshake(1, "GSSAPI")
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" {
		t.Fatalf("handshake GSSAPI: %+v", resp)
	}
	c.expectClosed()

	// PLAIN is implemented, but not enabled on this listener.
	_, scramOnly := startListener(t, Config{}, Listener{Name: "SCRAM", Protocol: SASLPlaintext, Mechanisms: []string{auth.ScramSHA256}})
	c = dialRaw(t, scramOnly)
	if resp := c.handshake(1, auth.Plain); resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != auth.ScramSHA256 {
		t.Fatalf("handshake PLAIN where only SCRAM-SHA-256 is enabled: %+v", resp)
	}
	c.expectClosed()

	_, plain := startListener(t, Config{}, Listener{Name: "PLAINTEXT", Protocol: Plaintext})
	c = dialRaw(t, plain)
	if resp := c.handshake(1, auth.Plain); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("handshake on PLAINTEXT: %+v", resp)
	}
	c.send(2, kmsg.NewPtrApiVersionsRequest())
	c.recv(kmsg.NewPtrApiVersionsResponse())
}

// The failed-authentication delay: a wrong password, an unknown user, a wrong nonce, malformed and
// out-of-order messages each get SASL_AUTHENTICATION_FAILED with one
// message, no sooner than the failure delay, then a closed connection;
// each is counted.
func TestSASLFailures(t *testing.T) {
	obs := &authCounter{}
	const delay = 150 * time.Millisecond
	_, addr := saslServer(t, Config{Observer: obs, SASL: SASLConfig{FailedDelay: delay}})
	scramFirst := func(c *rawConn) *kmsg.SASLAuthenticateResponse {
		c.handshake(1, auth.ScramSHA256)
		return c.authenticate(2, []byte("n,,n=alice,r=clientnonce"))
	}
	cases := []struct {
		name string
		run  func(c *rawConn) *kmsg.SASLAuthenticateResponse
	}{
		{"wrong password", func(c *rawConn) *kmsg.SASLAuthenticateResponse { return c.scramLogin("alice", "nope") }},
		{"unknown user", func(c *rawConn) *kmsg.SASLAuthenticateResponse { return c.scramLogin("mallory", "alice-pw") }},
		{"wrong nonce", func(c *rawConn) *kmsg.SASLAuthenticateResponse {
			scramFirst(c)
			return c.authenticate(3, []byte("c=biws,r=clientnonceXXXX,p=AAAA"))
		}},
		{"malformed first", func(c *rawConn) *kmsg.SASLAuthenticateResponse {
			c.handshake(1, auth.ScramSHA512)
			return c.authenticate(2, []byte("\xff\x00garbage"))
		}},
		{"final first", func(c *rawConn) *kmsg.SASLAuthenticateResponse {
			c.handshake(1, auth.ScramSHA256)
			return c.authenticate(2, []byte("c=biws,r=abc,p=AAAA"))
		}},
		{"plain wrong password", func(c *rawConn) *kmsg.SASLAuthenticateResponse {
			c.handshake(1, auth.Plain)
			return c.authenticate(2, []byte("\x00alice\x00bob-pw"))
		}},
	}
	var msg string
	for i, tc := range cases {
		c := dialRaw(t, addr)
		start := time.Now()
		resp := tc.run(c)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil {
			t.Fatalf("%s: %+v", tc.name, resp)
		}
		if took := time.Since(start); took < delay {
			t.Errorf("%s: answered after %v, before the failure delay %v", tc.name, took, delay)
		}
		// One message whatever failed: an unknown user looks like a
		// wrong password.
		if i == 0 {
			msg = *resp.ErrorMessage
		} else if m := *resp.ErrorMessage; m != msg && !strings.HasPrefix(m, strings.TrimSuffix(msg, auth.ScramSHA256)) {
			t.Errorf("%s: message %q differs from %q", tc.name, m, msg)
		}
		c.expectClosed()
	}
	if ok, bad := obs.counts(); ok != 0 || bad != len(cases) {
		t.Fatalf("counted %d successes, %d failures; want 0, %d", ok, bad, len(cases))
	}
}

// The pre-authentication gate: before authentication a frame above sasl.server.max.receive.size
// closes the connection.
func TestSASLOversizedToken(t *testing.T) {
	_, addr := saslServer(t, Config{SASL: SASLConfig{MaxReceiveSize: 4096}})
	c := dialRaw(t, addr)
	c.handshake(1, auth.Plain)
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SASLAuthBytes = bytes.Repeat([]byte{'x'}, 5000)
	c.send(2, req)
	// Closed before it is read: no answer at all.
	if n, err := io.ReadFull(c.nc, make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("an oversized frame got an answer (%d bytes, %v)", n, err)
	}
}

// SaslHandshake v0: the tokens that follow are bare frames, answered
// bare; PLAIN's answer is empty. A wrong password closes the connection.
func TestSASLHandshakeV0BareTokens(t *testing.T) {
	_, addr := saslServer(t, Config{})
	for _, tc := range []struct {
		token string
		ok    bool
	}{{"\x00bob\x00bob-pw", true}, {"\x00bob\x00alice-pw", false}} {
		c := dialRaw(t, addr)
		req := kmsg.NewPtrSASLHandshakeRequest()
		req.Mechanism = auth.Plain
		c.send(1, req)
		resp := kmsg.NewPtrSASLHandshakeResponse()
		c.recv(resp)
		if resp.ErrorCode != 0 {
			t.Fatalf("handshake v0: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		c.write(append([]byte{0, 0, 0, byte(len(tc.token))}, tc.token...))
		if !tc.ok {
			c.expectClosed()
			continue
		}
		if b := c.recvFrame(); len(b) != 0 {
			t.Fatalf("bare PLAIN answer %q, want empty", b)
		}
		if resp := c.describeUsers(2); resp.ErrorCode != 0 {
			t.Fatalf("after bare login: %+v", resp)
		}
	}
}

// KIP-368 re-authentication: with connections.max.reauth.ms the answer carries the session
// lifetime; re-authenticating in time extends the session, a request
// after it ended closes the connection, and re-authenticating as
// someone else fails.
func TestSASLReauthentication(t *testing.T) {
	const life = 400 * time.Millisecond
	_, addr := saslServer(t, Config{SASL: SASLConfig{ReauthAfter: life}})
	c := dialRaw(t, addr)
	start := time.Now()
	resp := c.scramLogin("alice", "alice-pw")
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis != life.Milliseconds() {
		t.Fatalf("login: %+v", resp)
	}
	c.describeUsers(4)
	// Re-authenticate on the same connection before the session ends
	// (a late re-authentication is refused below, so only a timely one
	// tells anything).
	if time.Since(start) < life/2 {
		resp = c.scramLogin("alice", "alice-pw")
		if resp.ErrorCode != 0 || resp.SessionLifetimeMillis != life.Milliseconds() {
			t.Fatalf("re-authentication: %+v", resp)
		}
		start = time.Now()
	}
	for time.Since(start) <= life { // the contract is about time itself
		time.Sleep(life / 8)
	}
	c.send(5, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	c.expectClosed()

	c = dialRaw(t, addr)
	c.scramLogin("alice", "alice-pw")
	if resp := c.scramLogin("bob", "bob-pw"); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("re-authentication as bob: %+v", resp)
	}
	c.expectClosed()
}
