package kafka

import (
	"fmt"
	"net"
	"testing"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/authz"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/resolvertest"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Per-API authorization: every API served has an authorization rule, so none is left
// unchecked (a missing one closes the connection at run time).
func TestEveryAPIHasAnAuthzRule(t *testing.T) {
	for _, a := range apis {
		if _, ok := authz.Lookup(a.key); !ok {
			t.Errorf("%s (key %d) has no authorization rule", apiName(a.key), a.key)
		}
	}
}

// authzConn is a request context of principal on a server whose
// authorizer holds acls and whose resolver has topic t.
func authzConn(t *testing.T, principal string, acls ...auth.ACL) *reqCtx {
	t.Helper()
	store, err := auth.OpenACLStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(acls); err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	res := resolvertest.Open(t, resolver.Config{AutoCreate: true, NumPartitions: 1})
	if _, err := res.EnsureTopic("t"); err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: Config{Authorizer: auth.NewAuthorizer(store, nil, false)}, res: res}
	c := &conn{s: s, nc: a, log: zap.NewNop()}
	c.auth.SetPrincipal(principal)
	return &reqCtx{conn: c}
}

// rule is the authorization rule of key (kafka/authz), run on rc as
// dispatch runs it.
func rule(key int16) func(rc *reqCtx, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	r, ok := authz.Lookup(key)
	if !ok {
		panic(fmt.Sprintf("no authorization rule for key %d", key))
	}
	return func(rc *reqCtx, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) { return r(rights{rc}, req) }
}

func acl(rt auth.ResourceType, name string, op auth.Operation) auth.ACL {
	return auth.ACL{ResourceType: rt, ResourceName: name, PatternType: auth.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: op, Permission: auth.PermissionAllow}
}

// Metadata fills authorized_operations, when asked, for a named topic it
// answers with an error too (unknown, invalid name), as Apache Kafka 4.4
// does (test/kafkadiff): the same operations as for an existing topic.
func TestMetadataAuthorizedOperationsOfErrorTopics(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"exists": 1})
	c := dialRaw(t, g.s.Addr())
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.IncludeTopicAuthorizedOperations = true
	for _, name := range []string{"exists", "missing", "bad name"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, mt)
	}
	req.AllowAutoTopicCreation = false
	resp := ask(c, req).(*kmsg.MetadataResponse)
	ops := map[string]int32{}
	for _, tp := range resp.Topics {
		ops[*tp.Topic] = tp.AuthorizedOperations
	}
	if ops["exists"] == authOpsNotRequested || ops["missing"] != ops["exists"] || ops["bad name"] != ops["exists"] {
		t.Errorf("authorized operations %v, want the existing topic's for every named topic", ops)
	}
}
