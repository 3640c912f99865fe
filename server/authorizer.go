package server

import (
	"fmt"

	"github.com/kgateway/kgateway/auth"
)

// AuthorizerConfig is authorization's configuration, with Kafka's names.
type AuthorizerConfig struct {
	// ClassName is authorizer.class.name: empty turns authorization off;
	// Kafka's StandardAuthorizer or AclAuthorizer select the built-in one
	// (auth.AuthorizerClassNames); any other name is an error.
	ClassName string
	// SuperUsers is super.users: principals (User:NAME) allowed anything.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found: a resource
	// no ACL applies to is open to every principal (default false).
	AllowEveryoneIfNoACL bool
	// MaxACLs bounds the ACL store (0: auth.DefaultMaxACLs).
	MaxACLs int
}

// open opens the ACL store in dir and the authorizer over it.
func (c AuthorizerConfig) open(dir string) (*auth.Authorizer, error) {
	if err := auth.CheckAuthorizerClass(c.ClassName); err != nil {
		return nil, fmt.Errorf("authorizer.class.name: %w", err)
	}
	store, err := auth.OpenACLStore(dir, c.MaxACLs)
	if err != nil {
		return nil, fmt.Errorf("open ACL store: %w", err)
	}
	return auth.NewAuthorizer(store, c.SuperUsers, c.AllowEveryoneIfNoACL), nil
}

// openShared opens the authorizer over the ACL store kept in doc (credentials and ACLs shared in etcd).
func (c AuthorizerConfig) openShared(doc auth.Shared) (*auth.Authorizer, error) {
	if err := auth.CheckAuthorizerClass(c.ClassName); err != nil {
		return nil, fmt.Errorf("authorizer.class.name: %w", err)
	}
	store, err := auth.NewSharedACLStore(doc, c.MaxACLs)
	if err != nil {
		return nil, fmt.Errorf("open ACL store: %w", err)
	}
	return auth.NewAuthorizer(store, c.SuperUsers, c.AllowEveryoneIfNoACL), nil
}
