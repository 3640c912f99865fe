package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func allow(rt ResourceType, name string, pt PatternType, principal string, op Operation) ACL {
	return ACL{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal,
		Host: "*", Operation: op, Permission: PermissionAllow}
}

func deny(a ACL) ACL { a.Permission = PermissionDeny; return a }

func newAuthorizer(t *testing.T, acls ...ACL) *Authorizer {
	t.Helper()
	s, err := OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(acls); err != nil {
		t.Fatal(err)
	}
	return NewAuthorizer(s, []string{"User:admin"}, false)
}

// The authorizer's decisions: each case is one decision of the built-in authorizer.
func TestAuthorize(t *testing.T) {
	const alice, bob = "User:alice", "User:bob"
	az := newAuthorizer(t,
		allow(ResourceTopic, "logs-", PatternPrefixed, alice, OpRead),
		allow(ResourceTopic, "orders", PatternLiteral, alice, OpWrite),
		deny(allow(ResourceTopic, "logs-secret", PatternLiteral, alice, OpRead)),
		allow(ResourceTopic, "logs-secret", PatternLiteral, alice, OpAll),
		allow(ResourceTopic, "*", PatternLiteral, bob, OpDescribe),
		allow(ResourceGroup, "g", PatternLiteral, WildcardPrincipal, OpRead),
		allow(ResourceCluster, ClusterName, PatternLiteral, alice, OpAlterConfigs),
		ACL{ResourceType: ResourceTopic, ResourceName: "hosted", PatternType: PatternLiteral,
			Principal: alice, Host: "10.0.0.1", Operation: OpWrite, Permission: PermissionAllow},
	)
	cases := []struct {
		principal, host string
		op              Operation
		rt              ResourceType
		name            string
		want            bool
	}{
		{alice, "1.2.3.4", OpRead, ResourceTopic, "logs-a", true},       // PREFIXED
		{alice, "1.2.3.4", OpRead, ResourceTopic, "logs", false},        // not under the prefix
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "logs-a", false},     // other operation
		{alice, "1.2.3.4", OpDescribe, ResourceTopic, "logs-a", true},   // READ implies DESCRIBE
		{alice, "1.2.3.4", OpDescribe, ResourceTopic, "orders", true},   // WRITE implies DESCRIBE
		{alice, "1.2.3.4", OpRead, ResourceTopic, "orders", false},      // DESCRIBE does not imply READ
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "orders", true},      // LITERAL
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "orders2", false},    // LITERAL is exact
		{alice, "1.2.3.4", OpRead, ResourceTopic, "logs-secret", false}, // DENY wins over ALLOW (prefix and ALL)
		{alice, "1.2.3.4", OpWrite, ResourceTopic, "logs-secret", true}, // the DENY is for READ only
		{bob, "1.2.3.4", OpDescribe, ResourceTopic, "anything", true},   // LITERAL wildcard
		{bob, "1.2.3.4", OpRead, ResourceTopic, "anything", false},
		{bob, "1.2.3.4", OpRead, ResourceGroup, "g", true},                        // User:*
		{alice, "1.2.3.4", OpDescribeConfigs, ResourceCluster, ClusterName, true}, // ALTER_CONFIGS implies DESCRIBE_CONFIGS
		{alice, "1.2.3.4", OpAlter, ResourceCluster, ClusterName, false},
		{alice, "10.0.0.1", OpWrite, ResourceTopic, "hosted", true}, // host matches
		{alice, "10.0.0.2", OpWrite, ResourceTopic, "hosted", false},
		{"User:admin", "1.2.3.4", OpDelete, ResourceTopic, "logs-secret", true}, // super user
		{alice, "1.2.3.4", OpRead, ResourceTransactionalID, "no-acls", false},   // no ACL: refused by default
	}
	for _, c := range cases {
		if got := az.Authorize(c.principal, c.host, c.op, c.rt, c.name); got != c.want {
			t.Errorf("%s@%s op %d on %d %q: %v, want %v", c.principal, c.host, c.op, c.rt, c.name, got, c.want)
		}
	}
}

// The authorizer's decisions: allow.everyone.if.no.acl.found opens only resources no ACL covers,
// whoever the ACLs name.
func TestAllowEveryoneIfNoACLFound(t *testing.T) {
	s, err := OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create([]ACL{allow(ResourceTopic, "owned", PatternLiteral, "User:alice", OpRead)}); err != nil {
		t.Fatal(err)
	}
	az := NewAuthorizer(s, nil, true)
	if !az.Authorize("User:bob", "h", OpWrite, ResourceTopic, "free") {
		t.Error("a topic without ACLs is refused")
	}
	if az.Authorize("User:bob", "h", OpRead, ResourceTopic, "owned") {
		t.Error("a topic with ACLs for another principal is allowed")
	}
}

// The authorizer's decisions: authorized_operations bits.
func TestOperations(t *testing.T) {
	az := newAuthorizer(t, allow(ResourceGroup, "g", PatternLiteral, "User:alice", OpRead))
	got := az.Operations("User:alice", "h", ResourceGroup, "g")
	if want := int32(1<<OpRead | 1<<OpDescribe); got != want {
		t.Fatalf("operations %b, want %b", got, want)
	}
	var none *Authorizer
	if got := none.Operations("User:x", "h", ResourceTransactionalID, "t"); got != 1<<OpDescribe|1<<OpWrite {
		t.Fatalf("without an authorizer: %b", got)
	}
}

// KIP-679: an idempotent producer needs WRITE on some topic a DENY does not
// cover, or IDEMPOTENT_WRITE on the cluster.
func TestAuthorizeAnyTopicWrite(t *testing.T) {
	az := newAuthorizer(t,
		allow(ResourceTopic, "a-", PatternPrefixed, "User:alice", OpWrite),
		allow(ResourceTopic, "b", PatternLiteral, "User:bob", OpWrite),
		deny(allow(ResourceTopic, "*", PatternLiteral, "User:bob", OpWrite)),
		allow(ResourceTopic, "c", PatternLiteral, "User:carol", OpRead))
	for p, want := range map[string]bool{"User:alice": true, "User:bob": false, "User:carol": false} {
		if got := az.AuthorizeAnyTopicWrite(p, "h"); got != want {
			t.Errorf("%s: %v, want %v", p, got, want)
		}
	}
}

// Kafka's ACL model: MATCH selects every pattern applying to the name; ANY and LITERAL
// select by exact name.
func TestFilterMatches(t *testing.T) {
	acls := []ACL{
		allow(ResourceTopic, "logs-app", PatternLiteral, "User:a", OpRead),
		allow(ResourceTopic, "logs-", PatternPrefixed, "User:a", OpRead),
		allow(ResourceTopic, "*", PatternLiteral, "User:a", OpRead),
		allow(ResourceTopic, "other", PatternLiteral, "User:a", OpRead),
		allow(ResourceGroup, "logs-app", PatternLiteral, "User:a", OpRead),
	}
	name := "logs-app"
	count := func(f Filter) int {
		n := 0
		for _, a := range acls {
			if f.Matches(a) {
				n++
			}
		}
		return n
	}
	base := Filter{ResourceType: ResourceTopic, ResourceName: &name, Operation: OpAny, Permission: PermissionAny}
	for pt, want := range map[PatternType]int{PatternMatch: 3, PatternAny: 1, PatternLiteral: 1, PatternPrefixed: 0} {
		f := base
		f.PatternType = pt
		if got := count(f); got != want {
			t.Errorf("pattern type %d selects %d, want %d", pt, got, want)
		}
	}
	all := Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}
	if got := count(all); got != len(acls) {
		t.Errorf("ANY filter selects %d of %d", got, len(acls))
	}
}

// Kafka's ACL model, the durable ACL store: what CreateAcls refuses.
func TestACLValidate(t *testing.T) {
	ok := allow(ResourceTopic, "t", PatternLiteral, "User:a", OpRead)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*ACL){
		"match pattern":  func(a *ACL) { a.PatternType = PatternMatch },
		"any resource":   func(a *ACL) { a.ResourceType = ResourceAny },
		"any operation":  func(a *ACL) { a.Operation = OpAny },
		"any permission": func(a *ACL) { a.Permission = PermissionAny },
		"bad principal":  func(a *ACL) { a.Principal = "alice" },
		"unknown op":     func(a *ACL) { a.Operation = 99 },
		"cluster name":   func(a *ACL) { a.ResourceType = ResourceCluster; a.Operation = OpAlter },
		"long name":      func(a *ACL) { a.ResourceName = strings.Repeat("x", MaxACLFieldBytes+1) },
		"empty name":     func(a *ACL) { a.ResourceName = "" },
		"empty host":     func(a *ACL) { a.Host = "" },
	}
	for what, change := range bad {
		a := ok
		change(&a)
		if err := a.Validate(); !errors.Is(err, ErrInvalidACL) {
			t.Errorf("%s: %v", what, err)
		}
	}
	// An operation the resource type does not support is stored, as
	// Kafka 4.4's controller stores it (test/kafkadiff's authz-acls).
	for _, a := range []ACL{allow(ResourceTopic, "t", PatternLiteral, "User:a", OpIdempotentWrite),
		allow(ResourceGroup, "g", PatternLiteral, "User:a", OpWrite)} {
		if err := a.Validate(); err != nil {
			t.Errorf("%v on %v: %v", a.Operation, a.ResourceType, err)
		}
	}
}

// The durable ACL store: changes survive reopening; the bound refuses a whole creation.
func TestACLStoreDurableAndBounded(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenACLStore(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	a := allow(ResourceTopic, "a", PatternLiteral, "User:a", OpRead)
	b := allow(ResourceTopic, "b", PatternPrefixed, "User:a", OpWrite)
	if err := s.Create([]ACL{a, b, a}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create([]ACL{a}); err != nil { // present: no change, no error
		t.Fatal(err)
	}
	c := allow(ResourceTopic, "c", PatternLiteral, "User:a", OpRead)
	d := allow(ResourceTopic, "d", PatternLiteral, "User:a", OpRead)
	if err := s.Create([]ACL{c, d}); !errors.Is(err, ErrTooManyACLs) {
		t.Fatalf("beyond the bound: %v", err)
	}
	name := "a"
	matched, err := s.Delete([]Filter{{ResourceType: ResourceTopic, ResourceName: &name, PatternType: PatternLiteral,
		Operation: OpAny, Permission: PermissionAny}})
	if err != nil || len(matched[0]) != 1 || matched[0][0] != a {
		t.Fatalf("delete: %v %v", matched, err)
	}
	re, err := OpenACLStore(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := re.ACLs(); len(got) != 1 || got[0] != b {
		t.Fatalf("reopened: %v, want [%v]", got, b)
	}
	if _, err := os.Stat(filepath.Join(dir, ACLFile)); err != nil {
		t.Fatal(err)
	}
	// A file that does not parse is an error, not an empty set (which
	// would open every resource with allow.everyone.if.no.acl.found).
	os.WriteFile(filepath.Join(dir, ACLFile), []byte("{"), 0o600)
	if _, err := OpenACLStore(dir, 0); err == nil {
		t.Fatal("a corrupt ACL file was accepted")
	}
}

// BenchmarkAuthorize is one ACL check (what each refused-or-allowed
// resource of a request costs) over a store of 1000 LITERAL and 100
// PREFIXED topic ACLs.
func BenchmarkAuthorize(b *testing.B) {
	s, err := OpenACLStore(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	var acls []ACL
	for i := range 1000 {
		acls = append(acls, allow(ResourceTopic, "topic-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i), PatternLiteral, "User:alice", OpRead))
	}
	for i := range 100 {
		acls = append(acls, allow(ResourceTopic, "pre-"+itoa(i)+"-", PatternPrefixed, "User:alice", OpRead))
	}
	if err := s.Create(acls); err != nil {
		b.Fatal(err)
	}
	az := NewAuthorizer(s, nil, false)
	b.ReportAllocs()
	for b.Loop() {
		if !az.Authorize("User:alice", "127.0.0.1", OpRead, ResourceTopic, "pre-42-orders") {
			b.Fatal("refused")
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
