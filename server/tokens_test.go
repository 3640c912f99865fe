package server

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/token"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// tokenServer serves dir on a SASL_PLAINTEXT listener with delegation
// tokens (secret) and the authorizer on, User:alice a super user.
func tokenServer(t *testing.T, dir, secret string) *Server {
	t.Helper()
	s, err := Open(Config{DataDir: dir, Resolver: resolver.Config{NumPartitions: 1},
		Listeners: []kafka.Listener{{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"}},
		Kafka:     kafka.Config{SASL: kafka.SASLConfig{Mechanisms: auth.Mechanisms, FailedDelay: time.Millisecond}},
		Authorizer: AuthorizerConfig{ClassName: "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			SuperUsers: []string{"User:alice"}},
		Tokens: token.Config{Secret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

// request sends req to s authenticating with m and returns the answer.
func request(t *testing.T, s *Server, m sasl.Mechanism, req kmsg.Request) (kmsg.Response, error) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()), kgo.RequestRetries(0), kgo.SASL(m))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.SeedBrokers()[0].Request(ctx, req)
}

// createTopic is the error of creating topic as m's principal.
func createTopic(t *testing.T, s *Server, m sasl.Mechanism, topic string) error {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := request(t, s, m, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode)
}

// A real client authenticates with a delegation token (SCRAM with
// tokenauth=true, the HMAC in base64 as password) as the token's owner:
// alice's token creates topics as the super user alice; a wrong HMAC
// fails; a token-authenticated connection may not manage tokens; bob
// creates tokens for carol with CREATE_TOKENS on User:carol (an ACL on
// the USER resource, KIP-373), not for dave; the token survives a
// restart.
func TestDelegationTokenAuthentication(t *testing.T) {
	dir := t.TempDir()
	cred, err := auth.NewCredential(auth.ScramSHA512, []byte("alice-pw"), auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.OpenStore(dir).SetCredential("alice", auth.ScramSHA512, cred); err != nil {
		t.Fatal(err)
	}
	s := tokenServer(t, dir, "the-secret")
	alice := scram.Auth{User: "alice", Pass: "alice-pw"}.AsSha512Mechanism()
	resp, err := request(t, s, alice, kmsg.NewPtrCreateDelegationTokenRequest())
	if err != nil {
		t.Fatal(err)
	}
	cr := resp.(*kmsg.CreateDelegationTokenResponse)
	if err := kerr.ErrorForCode(cr.ErrorCode); err != nil {
		t.Fatalf("create: %v", err)
	}
	hmacB64 := base64.StdEncoding.EncodeToString(cr.HMAC)
	tok := scram.Auth{User: cr.TokenID, Pass: hmacB64, IsToken: true}
	if err := createTopic(t, s, tok.AsSha256Mechanism(), "by-token"); err != nil {
		t.Fatalf("create a topic as the token's owner: %v", err)
	}
	if err := createTopic(t, s, scram.Auth{User: cr.TokenID, Pass: hmacB64}.AsSha256Mechanism(), "no-ext"); err == nil {
		t.Fatal("the token authenticated without tokenauth=true")
	}
	wrong := base64.StdEncoding.EncodeToString(token.HMAC(cr.TokenID, "another secret"))
	if err := createTopic(t, s, scram.Auth{User: cr.TokenID, Pass: wrong, IsToken: true}.AsSha512Mechanism(), "wrong"); err == nil {
		t.Fatal("a wrong HMAC authenticated")
	}
	resp, err = request(t, s, tok.AsSha512Mechanism(), kmsg.NewPtrDescribeDelegationTokenRequest())
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.DescribeDelegationTokenResponse).ErrorCode; code != kerr.DelegationTokenRequestNotAllowed.Code {
		t.Fatalf("describe over a token: %v, want DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", kerr.ErrorForCode(code))
	}

	// KIP-373 through real ACLs: bob may create tokens owned by carol
	// (CREATE_TOKENS on the USER resource User:carol), not by dave.
	cb, err := auth.NewCredential(auth.ScramSHA512, []byte("bob-pw"), auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.OpenStore(dir).SetCredential("bob", auth.ScramSHA512, cb); err != nil {
		t.Fatal(err)
	}
	ca := kmsg.NewPtrCreateACLsRequest()
	acl := kmsg.NewCreateACLsRequestCreation()
	acl.ResourceType, acl.ResourceName, acl.ResourcePatternType = kmsg.ACLResourceTypeUser, "User:carol", kmsg.ACLResourcePatternTypeLiteral
	acl.Principal, acl.Host, acl.Operation, acl.PermissionType = "User:bob", "*", kmsg.ACLOperationCreateTokens, kmsg.ACLPermissionTypeAllow
	ca.Creations = append(ca.Creations, acl)
	if resp, err := request(t, s, alice, ca); err != nil || resp.(*kmsg.CreateACLsResponse).Results[0].ErrorCode != 0 {
		t.Fatalf("create the CREATE_TOKENS ACL: %v %+v", err, resp)
	}
	bob := scram.Auth{User: "bob", Pass: "bob-pw"}.AsSha512Mechanism()
	for owner, want := range map[string]int16{"carol": 0, "dave": kerr.DelegationTokenAuthorizationFailed.Code} {
		req := kmsg.NewPtrCreateDelegationTokenRequest()
		req.OwnerPrincipalType, req.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr(owner)
		resp, err := request(t, s, bob, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.(*kmsg.CreateDelegationTokenResponse).ErrorCode; got != want {
			t.Fatalf("bob creates a token for %s: %v, want %v", owner, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
		}
	}

	s.Close()
	s = tokenServer(t, dir, "the-secret")
	if err := createTopic(t, s, tok.AsSha512Mechanism(), "after-restart"); err != nil {
		t.Fatalf("the token after a restart: %v", err)
	}
}

// In a cluster the tokens are one etcd document, like the SCRAM
// credentials: a token created on node 1 authenticates on node 2, also
// after node 2 restarts over its emptied data directory, and no node
// keeps them in its data directory.
func TestClusterDelegationTokens(t *testing.T) {
	c := secureCluster(t)
	edit := c.edit
	c.edit = func(cfg *Config) { edit(cfg); cfg.Tokens = token.Config{Secret: "cluster-secret"} }
	c.start(1)
	c.start(2)
	resp, err := c.onNode(1, "admin", "admin-pw", kmsg.NewPtrCreateDelegationTokenRequest())
	if err != nil {
		t.Fatal(err)
	}
	cr := resp.(*kmsg.CreateDelegationTokenResponse)
	if err := kerr.ErrorForCode(cr.ErrorCode); err != nil {
		t.Fatalf("create: %v", err)
	}
	pw := base64.StdEncoding.EncodeToString(cr.HMAC)
	onNode2 := func() error {
		c.mu.Lock()
		s := c.nodes[2]
		c.mu.Unlock()
		_, err := request(t, s, scram.Auth{User: cr.TokenID, Pass: pw, IsToken: true}.AsSha256Mechanism(), kmsg.NewPtrMetadataRequest())
		return err
	}
	eventually(t, "the token created on node 1 authenticates on node 2", onNode2)
	c.stop(2)
	c.start(2)
	if err := onNode2(); err != nil {
		t.Fatalf("after node 2 restarted: %v", err)
	}
	for id, dir := range c.dirs {
		if _, err := os.Stat(filepath.Join(dir, token.StoreFile)); err == nil {
			t.Errorf("node %d keeps the tokens in its data directory", id)
		}
	}
}
