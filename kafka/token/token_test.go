package token

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const secret = "s3cret"

// clock is a settable time for a manager under test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// open returns a manager over dir's file with cfg, on clk.
func open(t *testing.T, dir string, cfg Config, clk *clock) *Manager {
	t.Helper()
	doc, err := OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, doc)
	if err != nil {
		t.Fatal(err)
	}
	m.now = clk.now
	return m
}

// caller is an authenticated user's connection; acls lists what the
// authorizer allows it, as "op/type/name" (nil: no authorizer).
func caller(user string, allow ...string) Caller {
	return Caller{Principal: auth.UserPrincipal(user), Allowed: func(op auth.Operation, rt auth.ResourceType, name string) bool {
		for _, a := range allow {
			if a == opKey(op, rt, name) {
				return true
			}
		}
		return false
	}}
}

func opKey(op auth.Operation, rt auth.ResourceType, name string) string {
	return string(rune('0'+op)) + "/" + string(rune('0'+rt)) + "/" + name
}

func create(m *Manager, c Caller, v int16, edit func(r *kmsg.CreateDelegationTokenRequest)) *kmsg.CreateDelegationTokenResponse {
	r := kmsg.NewPtrCreateDelegationTokenRequest()
	r.Version = v
	if edit != nil {
		edit(r)
	}
	return m.serve(c, r).(*kmsg.CreateDelegationTokenResponse)
}

func renew(m *Manager, c Caller, h []byte, period int64) *kmsg.RenewDelegationTokenResponse {
	r := kmsg.NewPtrRenewDelegationTokenRequest()
	r.Version, r.HMAC, r.RenewTimeMillis = 2, h, period
	return m.serve(c, r).(*kmsg.RenewDelegationTokenResponse)
}

func expire(m *Manager, c Caller, h []byte, period int64) *kmsg.ExpireDelegationTokenResponse {
	r := kmsg.NewPtrExpireDelegationTokenRequest()
	r.Version, r.HMAC, r.ExpiryPeriodMillis = 2, h, period
	return m.serve(c, r).(*kmsg.ExpireDelegationTokenResponse)
}

// describe lists the token ids c sees among owners (nil: all).
func describe(t *testing.T, m *Manager, c Caller, owners ...string) ([]string, int16) {
	t.Helper()
	r := kmsg.NewPtrDescribeDelegationTokenRequest()
	r.Version = 3
	if owners != nil {
		r.Owners = []kmsg.DescribeDelegationTokenRequestOwner{}
		for _, o := range owners {
			ow := kmsg.NewDescribeDelegationTokenRequestOwner()
			ow.PrincipalType, ow.PrincipalName = "User", o
			r.Owners = append(r.Owners, ow)
		}
	}
	resp := m.serve(c, r).(*kmsg.DescribeDelegationTokenResponse)
	var ids []string
	for _, d := range resp.TokenDetails {
		if !hmac.Equal(d.HMAC, HMAC(d.TokenID, secret)) {
			t.Errorf("token %s described with a wrong HMAC", d.TokenID)
		}
		ids = append(ids, d.TokenID)
	}
	return ids, resp.ErrorCode
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	if w := int16(0); want != nil {
		w = want.Code
		if got != w {
			t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
		}
		return
	}
	if got != 0 {
		t.Fatalf("%s: %v, want no error", what, kerr.ErrorForCode(got))
	}
}

var t0 = time.UnixMilli(1_700_000_000_000)

// The HMAC is HMAC-SHA512 of the token id keyed with the secret's bytes,
// as Kafka computes it: checked against Go's hmac directly.
func TestHMACIsKafkas(t *testing.T) {
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte("tokenid"))
	if got := HMAC("tokenid", secret); !hmac.Equal(got, mac.Sum(nil)) || len(got) != 64 {
		t.Fatalf("HMAC %x", got)
	}
}

// Without a secret every API answers DELEGATION_TOKEN_AUTH_DISABLED to an
// authenticated caller; a caller that did not authenticate, or did with
// a token, gets DELEGATION_TOKEN_REQUEST_NOT_ALLOWED first, as in Kafka.
func TestDisabledAndNotAllowed(t *testing.T) {
	clk := &clock{t0}
	for _, m := range []*Manager{nil, open(t, t.TempDir(), Config{}, clk)} {
		alice := caller("alice")
		cr := create(m, alice, 3, nil)
		wantCode(t, "create without a secret", cr.ErrorCode, kerr.DelegationTokenAuthDisabled)
		if cr.PrincipalName != "alice" || cr.TokenRequesterPrincipalName != "alice" {
			t.Fatalf("create answers owner %q requester %q", cr.PrincipalName, cr.TokenRequesterPrincipalName)
		}
		wantCode(t, "renew without a secret", renew(m, alice, []byte("x"), 0).ErrorCode, kerr.DelegationTokenAuthDisabled)
		wantCode(t, "expire without a secret", expire(m, alice, []byte("x"), 0).ErrorCode, kerr.DelegationTokenAuthDisabled)
		_, code := describe(t, m, alice)
		wantCode(t, "describe without a secret", code, kerr.DelegationTokenAuthDisabled)
	}
	m := open(t, t.TempDir(), Config{Secret: secret}, clk)
	for name, c := range map[string]Caller{
		"anonymous": {Principal: auth.Anonymous, Allowed: caller("x").Allowed},
		"token":     {Principal: "User:alice", TokenAuthenticated: true, Allowed: caller("x").Allowed},
	} {
		cr := create(m, c, 3, nil)
		wantCode(t, name+" create", cr.ErrorCode, kerr.DelegationTokenRequestNotAllowed)
		if cr.IssueTimestamp != -1 || cr.ExpiryTimestamp != -1 || cr.MaxTimestamp != -1 {
			t.Fatalf("%s create: timestamps %d %d %d, want -1", name, cr.IssueTimestamp, cr.ExpiryTimestamp, cr.MaxTimestamp)
		}
		rr := renew(m, c, []byte("x"), 0)
		wantCode(t, name+" renew", rr.ErrorCode, kerr.DelegationTokenRequestNotAllowed)
		if rr.ExpiryTimestamp != -1 {
			t.Fatalf("%s renew: expiry %d, want -1", name, rr.ExpiryTimestamp)
		}
		wantCode(t, name+" expire", expire(m, c, []byte("x"), 0).ErrorCode, kerr.DelegationTokenRequestNotAllowed)
		_, code := describe(t, m, c)
		wantCode(t, name+" describe", code, kerr.DelegationTokenRequestNotAllowed)
	}
}

// Create: owner, requester, renewers, times (max lifetime asked and
// bounded, expiry bounded by max), the HMAC; another owner needs
// CREATE_TOKENS on its USER resource (KIP-373); renewers must be users.
func TestCreate(t *testing.T) {
	clk := &clock{t0}
	m := open(t, t.TempDir(), Config{Secret: secret, MaxLifetime: 10 * time.Hour, ExpiryTime: 2 * time.Hour}, clk)
	alice := caller("alice")
	cr := create(m, alice, 3, func(r *kmsg.CreateDelegationTokenRequest) {
		r.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "bob"}}
	})
	wantCode(t, "create", cr.ErrorCode, nil)
	now := t0.UnixMilli()
	if cr.PrincipalName != "alice" || cr.PrincipalType != "User" || cr.IssueTimestamp != now ||
		cr.ExpiryTimestamp != now+2*3600_000 || cr.MaxTimestamp != now+10*3600_000 || cr.TokenID == "" {
		t.Fatalf("create answered %+v", cr)
	}
	if !hmac.Equal(cr.HMAC, HMAC(cr.TokenID, secret)) {
		t.Fatal("create answered another HMAC than the token id's")
	}
	short := create(m, alice, 3, func(r *kmsg.CreateDelegationTokenRequest) { r.MaxLifetimeMillis = 3600_000 })
	if short.MaxTimestamp != now+3600_000 || short.ExpiryTimestamp != now+3600_000 {
		t.Fatalf("max lifetime 1h: max %d expiry %d", short.MaxTimestamp-now, short.ExpiryTimestamp-now)
	}
	long := create(m, alice, 3, func(r *kmsg.CreateDelegationTokenRequest) { r.MaxLifetimeMillis = 100 * 3600_000 })
	if long.MaxTimestamp != now+10*3600_000 {
		t.Fatalf("max lifetime beyond the bound: max %d", long.MaxTimestamp-now)
	}

	forBob := func(r *kmsg.CreateDelegationTokenRequest) {
		r.OwnerPrincipalType, r.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("bob")
	}
	wantCode(t, "create for bob without CREATE_TOKENS", create(m, alice, 3, forBob).ErrorCode, kerr.DelegationTokenAuthorizationFailed)
	admin := caller("admin", opKey(auth.OpCreateTokens, auth.ResourceUser, "User:bob"))
	cb := create(m, admin, 3, forBob)
	wantCode(t, "create for bob with CREATE_TOKENS", cb.ErrorCode, nil)
	if cb.PrincipalName != "bob" || cb.TokenRequesterPrincipalName != "admin" {
		t.Fatalf("create for bob: owner %q requester %q", cb.PrincipalName, cb.TokenRequesterPrincipalName)
	}
	badRenewer := func(r *kmsg.CreateDelegationTokenRequest) {
		r.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "Group", PrincipalName: "g"}}
	}
	wantCode(t, "a Group renewer", create(m, alice, 3, badRenewer).ErrorCode, kerr.InvalidPrincipalType)
}

// Renew and expire find the token by HMAC and allow only its owner and
// renewers; times are bounded by max; a negative expiry period removes
// the token; an expired token is DELEGATION_TOKEN_EXPIRED, then gone.
func TestRenewExpire(t *testing.T) {
	clk := &clock{t0}
	m := open(t, t.TempDir(), Config{Secret: secret, MaxLifetime: 10 * time.Hour, ExpiryTime: 2 * time.Hour}, clk)
	alice, bob, carol := caller("alice"), caller("bob"), caller("carol")
	cr := create(m, alice, 3, func(r *kmsg.CreateDelegationTokenRequest) {
		r.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "bob"}}
	})
	h := cr.HMAC
	wrong := HMAC(cr.TokenID, "another secret")
	wantCode(t, "renew by a wrong HMAC", renew(m, alice, wrong, 0).ErrorCode, kerr.DelegationTokenNotFound)
	wantCode(t, "expire by a wrong HMAC", expire(m, alice, wrong, 0).ErrorCode, kerr.DelegationTokenNotFound)
	wantCode(t, "renew by carol", renew(m, carol, h, 0).ErrorCode, kerr.DelegationTokenOwnerMismatch)
	wantCode(t, "expire by carol", expire(m, carol, h, 0).ErrorCode, kerr.DelegationTokenOwnerMismatch)

	clk.t = t0.Add(time.Hour)
	now := clk.t.UnixMilli()
	rr := renew(m, bob, h, 30*60_000)
	wantCode(t, "renew by the renewer", rr.ErrorCode, nil)
	if rr.ExpiryTimestamp != now+30*60_000 {
		t.Fatalf("renew 30 min: expiry +%d", rr.ExpiryTimestamp-now)
	}
	if rr = renew(m, alice, h, 0); rr.ExpiryTimestamp != now+2*3600_000 {
		t.Fatalf("renew by default: expiry +%d, want the expiry time", rr.ExpiryTimestamp-now)
	}
	short := create(m, alice, 3, func(r *kmsg.CreateDelegationTokenRequest) { r.MaxLifetimeMillis = 90 * 60_000 })
	clk.t = clk.t.Add(time.Hour)
	if rr = renew(m, alice, short.HMAC, 0); rr.ExpiryTimestamp != short.MaxTimestamp {
		t.Fatalf("renew near max: expiry %d, want max %d", rr.ExpiryTimestamp, short.MaxTimestamp)
	}
	er := expire(m, alice, h, 60_000)
	wantCode(t, "expire in a minute", er.ErrorCode, nil)
	if er.ExpiryTimestamp != clk.t.UnixMilli()+60_000 {
		t.Fatalf("expire in a minute: +%d", er.ExpiryTimestamp-clk.t.UnixMilli())
	}
	clk.t = clk.t.Add(2 * time.Minute)
	wantCode(t, "renew an expired token", renew(m, alice, h, 0).ErrorCode, kerr.DelegationTokenExpired)
	if _, _, _, ok := m.TokenCredential(cr.TokenID, auth.ScramSHA256); ok {
		t.Fatal("an expired token authenticates")
	}
	if err := m.Sweep(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "renew after the expired token was removed", renew(m, alice, h, 0).ErrorCode, kerr.DelegationTokenNotFound)

	c2 := create(m, alice, 3, nil)
	er = expire(m, alice, c2.HMAC, -1)
	wantCode(t, "expire at once", er.ErrorCode, nil)
	if er.ExpiryTimestamp != clk.t.UnixMilli() {
		t.Fatalf("expire at once: %d, want now", er.ExpiryTimestamp)
	}
	if ids, _ := describe(t, m, alice); len(ids) != 1 || ids[0] != short.TokenID {
		t.Fatalf("tokens after expiring all but one: %v, want %s", ids, short.TokenID)
	}
}

// Describe: null owners is all, empty is none; a caller sees the tokens
// it owns, requested or renews, and others' with DESCRIBE on the token or
// DESCRIBE_TOKENS on the owner (KIP-373).
func TestDescribe(t *testing.T) {
	clk := &clock{t0}
	m := open(t, t.TempDir(), Config{Secret: secret}, clk)
	alice, bob := caller("alice"), caller("bob")
	ta := create(m, alice, 3, nil).TokenID
	tb := create(m, bob, 3, func(r *kmsg.CreateDelegationTokenRequest) {
		r.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "alice"}}
	}).TokenID
	tc := create(m, caller("carol"), 3, nil).TokenID
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
	}
	ids, _ := describe(t, m, alice)
	check("alice, all owners", ids, ta, tb)
	ids, _ = describe(t, m, alice, []string{}...)
	check("alice, no owners", ids)
	ids, _ = describe(t, m, alice, "bob")
	check("alice, owner bob", ids, tb)
	ids, _ = describe(t, m, caller("dave", opKey(auth.OpDescribe, auth.ResourceDelegationToken, tc)))
	check("dave with DESCRIBE on carol's token", ids, tc)
	ids, _ = describe(t, m, caller("dave", opKey(auth.OpDescribeTokens, auth.ResourceUser, "User:bob")))
	check("dave with DESCRIBE_TOKENS on bob", ids, tb)
	ids, _ = describe(t, m, bob)
	check("bob", ids, tb)
}

// Tokens are in the data directory's file: a manager reopened over it has
// them, with the same HMACs and credentials; expired ones are dropped at
// the next change.
func TestTokensSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{t0}
	m := open(t, dir, Config{Secret: secret}, clk)
	cr := create(m, caller("alice"), 3, nil)
	m2 := open(t, dir, Config{Secret: secret}, clk)
	if ids, _ := describe(t, m2, caller("alice")); len(ids) != 1 || ids[0] != cr.TokenID {
		t.Fatalf("after reopening: %v", ids)
	}
	wantCode(t, "renew after reopening", renew(m2, caller("alice"), cr.HMAC, 0).ErrorCode, nil)
	c, owner, _, ok := m2.TokenCredential(cr.TokenID, auth.ScramSHA512)
	if !ok || owner != "alice" || c.Iterations != auth.MinIterations {
		t.Fatalf("credential after reopening: ok %v owner %q", ok, owner)
	}
	// With another secret the token's HMAC differs: not found.
	m3 := open(t, dir, Config{Secret: "other"}, clk)
	wantCode(t, "renew under another secret", renew(m3, caller("alice"), cr.HMAC, 0).ErrorCode, kerr.DelegationTokenNotFound)
}

// The bounds: delegation.tokens.max.per.principal per requester,
// delegation.tokens.max in all; an expired token no longer counts.
func TestBounds(t *testing.T) {
	clk := &clock{t0}
	m := open(t, t.TempDir(), Config{Secret: secret, MaxPerPrincipal: 2, Max: 3, ExpiryTime: time.Hour}, clk)
	alice := caller("alice")
	for range 2 {
		wantCode(t, "create within the bound", create(m, alice, 3, nil).ErrorCode, nil)
	}
	wantCode(t, "alice's third", create(m, alice, 3, nil).ErrorCode, kerr.PolicyViolation)
	wantCode(t, "bob's first", create(m, caller("bob"), 3, nil).ErrorCode, nil)
	wantCode(t, "carol's first beyond the global bound", create(m, caller("carol"), 3, nil).ErrorCode, kerr.PolicyViolation)
	clk.t = clk.t.Add(2 * time.Hour)
	wantCode(t, "alice's after hers expired", create(m, alice, 3, nil).ErrorCode, nil)
}

// The SCRAM credential of a token is derived from the HMAC in base64,
// the password a client proves (Kafka's DelegationTokenCache).
func TestCredentialIsTheHMACs(t *testing.T) {
	m := open(t, t.TempDir(), Config{Secret: secret}, &clock{t0})
	cr := create(m, caller("alice"), 3, nil)
	c, _, _, ok := m.TokenCredential(cr.TokenID, auth.ScramSHA256)
	if !ok {
		t.Fatal("no credential")
	}
	pw := base64.StdEncoding.EncodeToString(cr.HMAC)
	want, err := auth.CredentialFromSalted(auth.ScramSHA256, saltedPassword(t, pw, c), c.Salt, c.Iterations)
	if err != nil || !hmac.Equal(want.StoredKey, c.StoredKey) {
		t.Fatal("the token's credential is not derived from its HMAC")
	}
}

func saltedPassword(t *testing.T, pw string, c auth.Credential) []byte {
	t.Helper()
	b, err := pbkdf2.Key(sha256.New, pw, c.Salt, c.Iterations, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
