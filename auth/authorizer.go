package auth

// The built-in authorizer (the authorizer's decisions): Kafka's StandardAuthorizer rules over an
// ACLStore.

import (
	"fmt"
	"strings"
)

// AuthorizerClassNames are the authorizer.class.name values that select
// the built-in authorizer, so that Kafka's server.properties work.
var AuthorizerClassNames = []string{
	"org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"kafka.security.authorizer.AclAuthorizer",
}

// CheckAuthorizerClass accepts "" (no authorizer) and Kafka's names.
func CheckAuthorizerClass(name string) error {
	if name == "" {
		return nil
	}
	for _, n := range AuthorizerClassNames {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("authorizer %q is not supported (%s)", name, strings.Join(AuthorizerClassNames, " or "))
}

// ParseSuperUsers parses super.users: principals separated by ';'.
func ParseSuperUsers(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if typ, name, ok := strings.Cut(p, ":"); !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("super.users: %q is not TYPE:NAME", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// Authorizer decides requests against the ACL store.
type Authorizer struct {
	store        *ACLStore
	superUsers   map[string]bool
	allowIfNoACL bool
}

// NewAuthorizer authorizes against store; superUsers may do anything;
// allowIfNoACL is allow.everyone.if.no.acl.found.
func NewAuthorizer(store *ACLStore, superUsers []string, allowIfNoACL bool) *Authorizer {
	su := make(map[string]bool, len(superUsers))
	for _, p := range superUsers {
		su[p] = true
	}
	return &Authorizer{store: store, superUsers: su, allowIfNoACL: allowIfNoACL}
}

// Store is the authorizer's ACL store.
func (az *Authorizer) Store() *ACLStore { return az.store }

// Authorize says whether principal, connected from host, may perform op
// on the resource (rt, name) (the authorizer's decisions): a super user may; else a matching DENY
// for op (or ALL) refuses; else a matching ALLOW for op, ALL or an
// operation implying op grants; a resource no ACL applies to at all is
// allowed only with allow.everyone.if.no.acl.found.
func (az *Authorizer) Authorize(principal, host string, op Operation, rt ResourceType, name string) bool {
	if az.superUsers[principal] {
		return true
	}
	any, allow, deny := false, false, false
	az.store.index().matching(rt, name, func(a ACL) bool {
		any = true
		if !appliesTo(a, principal, host) {
			return true
		}
		if a.Permission == PermissionDeny {
			deny = a.Operation == op || a.Operation == OpAll
			return !deny
		}
		if !allow {
			allow = allows(a.Operation, op)
		}
		return true
	})
	switch {
	case deny:
		return false
	case !any:
		return az.allowIfNoACL
	}
	return allow
}

// appliesTo says whether a names principal (or User:*) and host (or *).
func appliesTo(a ACL, principal, host string) bool {
	return (a.Principal == principal || a.Principal == WildcardPrincipal) &&
		(a.Host == host || a.Host == Wildcard)
}

// allows says whether an ALLOW for have grants want (the implications of Kafka's ACL model).
func allows(have, want Operation) bool {
	if have == want || have == OpAll {
		return true
	}
	for _, o := range implies[want] {
		if o == have {
			return true
		}
	}
	return false
}

// AuthorizeAnyTopicWrite is Kafka's authorizeByResourceType for WRITE on
// topics, which an idempotent InitProducerId needs (KIP-679) besides
// IDEMPOTENT_WRITE on the cluster: some ALLOW for WRITE (or ALL) on a
// topic pattern that no DENY for the principal covers.
func (az *Authorizer) AuthorizeAnyTopicWrite(principal, host string) bool {
	if az.superUsers[principal] {
		return true
	}
	ix := az.store.index()
	if az.allowIfNoACL && len(ix.prefixed[ResourceTopic]) == 0 && !hasLiteral(ix, ResourceTopic) {
		return true
	}
	var allows, denies []ACL
	for _, a := range ix.all {
		if a.ResourceType != ResourceTopic || !appliesTo(a, principal, host) ||
			(a.Operation != OpWrite && a.Operation != OpAll) {
			continue
		}
		if a.Permission == PermissionDeny {
			denies = append(denies, a)
		} else {
			allows = append(allows, a)
		}
	}
	for _, a := range allows {
		if !deniedPattern(a, denies) {
			return true
		}
	}
	return false
}

// deniedPattern says whether some DENY covers every resource a covers.
func deniedPattern(a ACL, denies []ACL) bool {
	for _, d := range denies {
		switch {
		case d.PatternType == PatternLiteral && d.ResourceName == Wildcard:
			return true
		case d.PatternType == PatternPrefixed && strings.HasPrefix(a.ResourceName, d.ResourceName):
			return true
		case d.PatternType == PatternLiteral && a.PatternType == PatternLiteral && d.ResourceName == a.ResourceName:
			return true
		}
	}
	return false
}

func hasLiteral(ix *aclIndex, rt ResourceType) bool {
	for k := range ix.literal {
		if k.rt == rt {
			return true
		}
	}
	return false
}

// Operations is the bit field of the operations principal may perform on
// the resource (authorized_operations: bit n set for operation code n).
func (az *Authorizer) Operations(principal, host string, rt ResourceType, name string) int32 {
	var bits int32
	for _, op := range supported[rt] {
		if az == nil || az.Authorize(principal, host, op, rt, name) {
			bits |= 1 << op
		}
	}
	return bits
}
