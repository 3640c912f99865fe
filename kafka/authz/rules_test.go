package authz

import (
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
)

// request is a Request of one principal, checked by a real authorizer
// over a real ACL store, with a real resolver as the topic catalog.
type request struct {
	az        *auth.Authorizer
	principal string
	res       *resolver.Resolver
}

const testHost = "127.0.0.1"

func (r request) Allowed(op auth.Operation, rt auth.ResourceType, name string) bool {
	return r.az.Authorize(r.principal, testHost, op, rt, name)
}

func (r request) Operations(rt auth.ResourceType, name string) int32 {
	return r.az.Operations(r.principal, testHost, rt, name)
}

func (r request) Authorizing() bool   { return true }
func (r request) AnyTopicWrite() bool { return r.az.AuthorizeAnyTopicWrite(r.principal, testHost) }

func (r request) TopicExists(name string) bool {
	_, ok := r.res.Partitions(name)
	return ok
}

func (r request) TopicByID(id [16]byte) (string, bool) {
	t, ok := r.res.TopicByID(resolver.TopicID(id))
	return t.Name, ok
}

func (r request) AutoCreateTopics() bool      { return r.res.AutoCreateTopics() }
func (r request) IsInternal(name string) bool { return resolver.IsInternalTopic(name) }

// authzConn is a request of principal against an authorizer holding acls
// and a resolver that has topic t.
func authzConn(t *testing.T, principal string, acls ...auth.ACL) Request {
	t.Helper()
	store, err := auth.OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(acls); err != nil {
		t.Fatal(err)
	}
	res := resolvertest.Open(t, resolver.Config{AutoCreate: true, NumPartitions: 1})
	if _, err := res.EnsureTopic("t"); err != nil {
		t.Fatal(err)
	}
	return request{az: auth.NewAuthorizer(store, nil, false), principal: principal, res: res}
}

func acl(rt auth.ResourceType, name string, op auth.Operation) auth.ACL {
	return auth.ACL{ResourceType: rt, ResourceName: name, PatternType: auth.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: op, Permission: auth.PermissionAllow}
}
