package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterUserScramCredentials checks what Kafka 4.4's ScramControlManager
// checks (the name, the mechanism, the iterations) and no more: a salt and
// a salted password of any length are taken, an empty salt too. An empty
// salted password fails there as UNKNOWN_SERVER_ERROR without a message.
// (All four checked against a real broker.)
func TestAlterScramAnySaltedLength(t *testing.T) {
	_, addr := saslServer(t, Config{})
	c := dialRaw(t, addr)
	if resp := c.scramLogin("alice", "alice-pw"); resp.ErrorCode != 0 {
		t.Fatalf("login: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	for i, tc := range []struct {
		user         string
		salt, salted []byte
		code         int16
	}{
		{"short", []byte("s"), []byte("abc"), 0},
		{"empty-salt", nil, make([]byte, 32), 0},
		{"long", make([]byte, 8), make([]byte, 100), 0},
		{"empty-salted", []byte("s"), nil, kerr.UnknownServerError.Code},
	} {
		req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = tc.user, 1, 4096, tc.salt, tc.salted
		req.Upsertions = append(req.Upsertions, u)
		c.send(int32(10+i), req)
		resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
		c.recv(resp)
		r := resp.Results[0]
		if r.ErrorCode != tc.code || (tc.code == kerr.UnknownServerError.Code && r.ErrorMessage != nil) {
			t.Fatalf("%s: code %d message %v, want code %d", tc.user, r.ErrorCode, r.ErrorMessage, tc.code)
		}
	}
	got := map[string]bool{}
	for _, r := range c.describeUsers(20).Results {
		got[r.User] = len(r.CredentialInfos) > 0
	}
	if !got["short"] || !got["empty-salt"] || !got["long"] || got["empty-salted"] {
		t.Fatalf("described users %v", got)
	}
}

// scram.users.max bounds the users AlterUserScramCredentials creates: a
// new user beyond is POLICY_VIOLATION and is not stored; a change to an
// existing user is not refused.
func TestAlterScramMaxUsers(t *testing.T) {
	_, addr := saslServer(t, Config{SASL: SASLConfig{MaxUsers: 3}}) // alice and bob exist
	c := dialRaw(t, addr)
	if resp := c.scramLogin("alice", "alice-pw"); resp.ErrorCode != 0 {
		t.Fatalf("login: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	for i, tc := range []struct {
		user string
		code int16
	}{{"carol", 0}, {"dave", kerr.PolicyViolation.Code}, {"bob", 0}} {
		req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = tc.user, 1, 4096, []byte("s"), make([]byte, 32)
		req.Upsertions = append(req.Upsertions, u)
		c.send(int32(10+i), req)
		resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
		c.recv(resp)
		if r := resp.Results[0]; r.ErrorCode != tc.code {
			t.Fatalf("%s: %v, want %v", tc.user, kerr.ErrorForCode(r.ErrorCode), kerr.ErrorForCode(tc.code))
		}
	}
	for _, r := range c.describeUsers(20).Results {
		if r.User == "dave" && len(r.CredentialInfos) > 0 {
			t.Fatal("the refused user was stored")
		}
	}
}
