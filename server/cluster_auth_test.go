package server

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/authstore"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// secureCluster is a test cluster whose nodes serve one SASL_PLAINTEXT
// listener with the authorizer on, super user User:admin, whose
// credential is put into etcd as `kgateway users` would.
func secureCluster(t *testing.T) *testCluster {
	c := newTestCluster(t)
	c.edit = func(cfg *Config) {
		cfg.Listen = ""
		cfg.Listeners = []kafka.Listener{{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"}}
		cfg.Kafka.SASL = kafka.SASLConfig{Mechanisms: auth.Mechanisms, FailedDelay: time.Millisecond}
		cfg.Authorizer = AuthorizerConfig{ClassName: "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			SuperUsers: []string{"User:admin"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := authstore.Open(ctx, c.etcd.Client(t), authstore.ScramKey(node.DefaultPrefix), authstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cred, err := auth.NewCredential(auth.ScramSHA256, []byte("admin-pw"), auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.NewSharedStore(d).SetCredential("admin", auth.ScramSHA256, cred); err != nil {
		t.Fatal(err)
	}
	return c
}

// userClient is a client of user that talks to node id only.
func (c *testCluster) userClient(id int32, user, pw string) *kgo.Client {
	c.t.Helper()
	c.mu.Lock()
	addr := c.nodes[id].Addr().String()
	c.mu.Unlock()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0),
		kgo.SASL(scram.Auth{User: user, Pass: pw}.AsSha256Mechanism()))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// onNode sends req to node id as user and returns the answer.
func (c *testCluster) onNode(id int32, user, pw string, req kmsg.Request) (kmsg.Response, error) {
	cl := c.userClient(id, user, pw)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.SeedBrokers()[0].Request(ctx, req)
}

// eventually retries check until it returns nil, within a deadline.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// upsertUser creates user (SCRAM-SHA-256, password pw) through node id.
func (c *testCluster) upsertUser(id int32, user, pw string) error {
	salt := []byte("salt-of-" + user)
	salted, err := pbkdf2.Key(sha256.New, pw, salt, auth.MinIterations, sha256.Size)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, 1, auth.MinIterations, salt, salted
	req.Upsertions = append(req.Upsertions, u)
	resp, err := c.onNode(id, "admin", "admin-pw", req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode)
}

// createACL creates a on the topic through node id.
func (c *testCluster) createACL(id int32, topic, principal string, op auth.Operation, perm auth.Permission) {
	c.t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, topic, kmsg.ACLResourcePatternTypeLiteral
	cr.Principal, cr.Host = principal, "*"
	cr.Operation, cr.PermissionType = kmsg.ACLOperation(op), kmsg.ACLPermissionType(perm)
	req.Creations = append(req.Creations, cr)
	resp, err := c.onNode(id, "admin", "admin-pw", req)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.CreateACLsResponse).Results[0].ErrorCode); err != nil {
		c.t.Fatalf("create ACL on node %d: %v", id, err)
	}
}

// describeTopic is the error of a Metadata request for topic by user on
// node id: nil when the user may describe it.
func (c *testCluster) describeTopic(id int32, user, pw, topic string) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := c.onNode(id, user, pw, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.MetadataResponse).Topics[0].ErrorCode)
}

// Credentials and ACLs shared in etcd: a user created through AlterUserScramCredentials on one node
// logs in on another; an ACL created on one node allows and denies on
// another; a node restarted over its emptied data directory has both.
func TestClusterSecurityShared(t *testing.T) {
	c := secureCluster(t)
	c.start(1)
	c.start(2)
	if err := c.upsertUser(1, "alice", "alice-pw"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice created on node 1 logs in on node 2", func() error {
		_, err := c.onNode(2, "alice", "alice-pw", kmsg.NewPtrMetadataRequest())
		return err
	})
	if _, err := c.onNode(2, "alice", "wrong", kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("a wrong password was accepted")
	}

	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", 1, 1
	req.Topics = append(req.Topics, rt)
	if _, err := c.onNode(1, "admin", "admin-pw", req); err != nil {
		t.Fatal(err)
	}
	eventually(t, "topic t", func() error { return c.describeTopic(2, "admin", "admin-pw", "t") })
	if err := c.describeTopic(2, "alice", "alice-pw", "t"); err != kerr.TopicAuthorizationFailed {
		t.Fatalf("alice describes t without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	c.createACL(1, "t", "User:alice", auth.OpDescribe, auth.PermissionAllow)
	eventually(t, "an ALLOW created on node 1 allows on node 2", func() error {
		return c.describeTopic(2, "alice", "alice-pw", "t")
	})
	c.createACL(1, "t", "User:alice", auth.OpAll, auth.PermissionDeny)
	eventually(t, "a DENY created on node 1 denies on node 2", func() error {
		if err := c.describeTopic(2, "alice", "alice-pw", "t"); err != kerr.TopicAuthorizationFailed {
			return fmt.Errorf("describe: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
		return nil
	})

	// Node 2 again, over its emptied data directory (the data directory as a cache).
	c.stop(2)
	c.start(2)
	for _, f := range []string{auth.StoreFile, auth.ACLFile} {
		if _, err := os.Stat(c.dirs[2] + "/" + f); err == nil {
			t.Errorf("%s in a cluster node's data directory", f)
		}
	}
	if err := c.describeTopic(2, "alice", "alice-pw", "t"); err != kerr.TopicAuthorizationFailed {
		t.Fatalf("after a restart, alice describes t: %v, want the DENY's TOPIC_AUTHORIZATION_FAILED", err)
	}
	// Without the DENY the ALLOW still stands on the restarted node.
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.StringPtr("t"), kmsg.ACLResourcePatternTypeLiteral
	f.Principal, f.Host = kmsg.StringPtr("User:alice"), kmsg.StringPtr("*")
	f.Operation, f.PermissionType = kmsg.ACLOperationAll, kmsg.ACLPermissionTypeDeny
	del.Filters = append(del.Filters, f)
	if _, err := c.onNode(1, "admin", "admin-pw", del); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the DENY deleted on node 1 is gone on node 2", func() error {
		return c.describeTopic(2, "alice", "alice-pw", "t")
	})
}

// Credentials and ACLs shared in etcd: AlterUserScramCredentials and CreateAcls racing on two nodes all
// land: each is a compare-and-swap of the whole document, retried on
// conflict, never a blind overwrite.
func TestClusterSecurityConcurrentUpdates(t *testing.T) {
	c := secureCluster(t)
	c.start(1)
	c.start(2)
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		for _, id := range []int32{1, 2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.upsertUser(id, fmt.Sprintf("u%d-%d", id, i), "pw"); err != nil {
					t.Errorf("user via node %d: %v", id, err)
				}
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.createACLNoFatal(t, id, fmt.Sprintf("t%d-%d", id, i))
			}()
		}
	}
	wg.Wait()
	for _, id := range []int32{1, 2} {
		eventually(t, fmt.Sprintf("every user and ACL on node %d", id), func() error {
			resp, err := c.onNode(id, "admin", "admin-pw", kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
			if err != nil {
				return err
			}
			if got := len(resp.(*kmsg.DescribeUserSCRAMCredentialsResponse).Results); got != 2*n+1 {
				return fmt.Errorf("%d users, want %d", got, 2*n+1)
			}
			dreq := kmsg.NewPtrDescribeACLsRequest()
			dreq.ResourceType, dreq.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			dreq.Operation, dreq.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			dresp, err := c.onNode(id, "admin", "admin-pw", dreq)
			if err != nil {
				return err
			}
			if got := len(dresp.(*kmsg.DescribeACLsResponse).Resources); got != 2*n {
				return fmt.Errorf("ACLs on %d resources, want %d", got, 2*n)
			}
			return nil
		})
	}
}

// createACLNoFatal is createACL for a goroutine other than the test's.
func (c *testCluster) createACLNoFatal(t *testing.T, id int32, topic string) {
	req := kmsg.NewPtrCreateACLsRequest()
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, topic, kmsg.ACLResourcePatternTypeLiteral
	cr.Principal, cr.Host = "User:bob", "*"
	cr.Operation, cr.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	req.Creations = append(req.Creations, cr)
	resp, err := c.onNode(id, "admin", "admin-pw", req)
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.CreateACLsResponse).Results[0].ErrorCode)
	}
	if err != nil {
		t.Errorf("ACL via node %d: %v", id, err)
	}
}
