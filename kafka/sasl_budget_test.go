package kafka

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// dialRawFrom is dialRaw from a chosen loopback address (Linux routes all
// of 127.0.0.0/8 to lo), so that one test can be several clients.
func dialRawFrom(t *testing.T, from string, addr net.Addr) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: testDeadline, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testDeadline))
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc}
}

// plainLogin runs a PLAIN exchange from a loopback address and returns
// its answer.
func plainLogin(t *testing.T, from string, addr net.Addr, user, password string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	c := dialRawFrom(t, from, addr)
	if hs := c.handshake(1, auth.Plain); hs.ErrorCode != 0 {
		t.Fatalf("handshake: %v", kerr.ErrorForCode(hs.ErrorCode))
	}
	resp := c.authenticate(2, []byte("\x00"+user+"\x00"+password))
	if resp.ErrorCode != 0 {
		c.expectClosed()
	}
	return resp
}

// Failed PLAIN logins: a flood of wrong passwords from one address
// derives no more than that address's budget, every one of them is
// answered as a wrong password is, and a correct login from another
// address still succeeds at once (it derives, and spends nothing).
func TestPlainFailedLoginBudgetPerAddress(t *testing.T) {
	const perAddress, flood, parallel = 8, 120, 12
	s, addr := saslServer(t, Config{SASL: SASLConfig{PlainFailuresPerAddress: perAddress}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	msgs := map[string]int{}
	for w := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < flood; i += parallel {
				resp := plainLogin(t, "127.0.0.1", addr, "alice", fmt.Sprintf("guess-%d", i))
				mu.Lock()
				msgs[fmt.Sprintf("%d %v", resp.ErrorCode, *resp.ErrorMessage)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The budget refills at perAddress a minute: a second or two of
	// flooding may add one more.
	if d := s.plainBudget.Derivations(); d > perAddress+1 {
		t.Fatalf("%d bad logins from one address cost %d derivations; the budget is %d", flood, d, perAddress)
	}
	if r := s.plainBudget.Refused(); r < flood-perAddress-1 {
		t.Fatalf("only %d of %d bad logins refused without deriving", r, flood)
	}
	// No oracle: one answer for derived and refused failures alike.
	if len(msgs) != 1 {
		t.Fatalf("failed logins got different answers: %v", msgs)
	}
	for m := range msgs {
		if want := fmt.Sprint(kerr.SaslAuthenticationFailed.Code); m[:len(want)] != want {
			t.Fatalf("answer %q is not SASL_AUTHENTICATION_FAILED", m)
		}
	}
	before := s.plainBudget.Derivations()
	if resp := plainLogin(t, "127.0.0.2", addr, "alice", "alice-pw"); resp.ErrorCode != 0 {
		t.Fatalf("correct login from another address: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if d := s.plainBudget.Derivations() - before; d != 1 {
		t.Fatalf("the correct login derived %d times, want 1", d)
	}
	// The flooded address itself is out of budget for alice: a check it
	// cannot afford fails, right password or not (it is not yet a
	// trusted pair, nor can it become one without deriving).
	if resp := plainLogin(t, "127.0.0.1", addr, "bob", "bob-pw"); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("login from the spent address: %v, want SASL_AUTHENTICATION_FAILED", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// Failed PLAIN logins: many addresses guessing one user spend the user's
// budget, after which a new address's check is refused without deriving,
// while an address that logged in as that user before still logs in.
func TestPlainFailedLoginBudgetPerUser(t *testing.T) {
	const perAddress, perUser = 4, 12
	s, addr := saslServer(t, Config{SASL: SASLConfig{PlainFailuresPerAddress: perAddress, PlainFailuresPerUser: perUser}})
	if resp := plainLogin(t, "127.0.0.3", addr, "alice", "alice-pw"); resp.ErrorCode != 0 {
		t.Fatalf("first login: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	for a := range 8 { // 8 addresses × 4 > 12
		from := fmt.Sprintf("127.0.1.%d", a+1)
		for i := range perAddress {
			plainLogin(t, from, addr, "alice", fmt.Sprintf("guess-%d", i))
		}
	}
	if d := s.plainBudget.Derivations(); d > 1+perUser+1 {
		t.Fatalf("guesses at alice from 8 addresses cost %d derivations; her budget is %d", d-1, perUser)
	}
	before := s.plainBudget.Derivations()
	if resp := plainLogin(t, "127.0.0.4", addr, "alice", "alice-pw"); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("alice from a new address while her budget is spent: %v, want SASL_AUTHENTICATION_FAILED", kerr.ErrorForCode(resp.ErrorCode))
	}
	if d := s.plainBudget.Derivations() - before; d != 0 {
		t.Fatalf("a check beyond the user's budget derived %d times", d)
	}
	if resp := plainLogin(t, "127.0.0.3", addr, "alice", "alice-pw"); resp.ErrorCode != 0 {
		t.Fatalf("alice from the address she logged in from before: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := plainLogin(t, "127.0.0.4", addr, "bob", "bob-pw"); resp.ErrorCode != 0 {
		t.Fatalf("bob, whose budget is whole: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}
