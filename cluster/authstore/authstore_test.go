package authstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/etcdtest"
)

const prefix = "/t/"

func open(t *testing.T, srv *etcdtest.Server, key string, opts Options) *Doc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := Open(ctx, srv.Client(t), key, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// waitUsers waits until store lists want users.
func waitUsers(t *testing.T, store *auth.Store, want int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		names, err := store.UserNames()
		if err == nil && len(names) == want {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("users %v (err %v), want %d", names, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Credentials and ACLs shared in etcd: updates from two nodes (two clients, two Docs) racing on the same
// key all land (compare-and-swap, retried on conflict), and each node's
// copy follows the other's changes through its watch.
func TestConcurrentUpdatesFromTwoNodes(t *testing.T) {
	srv := etcdtest.Start(t)
	a := auth.NewSharedStore(open(t, srv, ScramKey(prefix), Options{}))
	b := auth.NewSharedStore(open(t, srv, ScramKey(prefix), Options{}))
	c, err := auth.NewCredential(auth.ScramSHA256, []byte("pw"), auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	var wg sync.WaitGroup
	for i := range n {
		for _, s := range []*auth.Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("u%d-%p", i, s)
				if err := s.SetCredential(name, auth.ScramSHA256, c); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	waitUsers(t, a, 2*n)
	waitUsers(t, b, 2*n)
	if err := a.DeleteCredential(fmt.Sprintf("u0-%p", b), ""); err != nil {
		t.Fatal(err)
	}
	waitUsers(t, b, 2*n-1)
	if err := b.DeleteCredential(fmt.Sprintf("u0-%p", b), ""); !errors.Is(err, auth.ErrNoCredential) {
		t.Fatalf("deleting a deleted user: %v, want ErrNoCredential", err)
	}
}

// Credentials and ACLs shared in etcd: an update whose document would pass the size bound is refused
// with ErrSharedTooLarge, for the ACL store as ErrTooManyACLs (so
// CreateAcls answers POLICY_VIOLATION), and nothing is written.
func TestSizeBound(t *testing.T) {
	srv := etcdtest.Start(t)
	d := open(t, srv, ACLKey(prefix), Options{MaxSize: 2048})
	store, err := auth.NewSharedACLStore(d, 0)
	if err != nil {
		t.Fatal(err)
	}
	acl := func(i int) auth.ACL {
		return auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: fmt.Sprintf("topic-%03d", i),
			PatternType: auth.PatternLiteral, Principal: "User:alice", Host: "*",
			Operation: auth.OpRead, Permission: auth.PermissionAllow}
	}
	if err := store.Create([]auth.ACL{acl(0)}); err != nil {
		t.Fatal(err)
	}
	var many []auth.ACL
	for i := 1; i < 100; i++ {
		many = append(many, acl(i))
	}
	err = store.Create(many)
	if !errors.Is(err, auth.ErrSharedTooLarge) || !errors.Is(err, auth.ErrTooManyACLs) {
		t.Fatalf("an oversized set: %v, want ErrSharedTooLarge and ErrTooManyACLs", err)
	}
	if !strings.Contains(err.Error(), "size limit") {
		t.Errorf("unclear error %q", err)
	}
	other, err := auth.NewSharedACLStore(open(t, srv, ACLKey(prefix), Options{}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := other.ACLs(); len(got) != 1 {
		t.Fatalf("%d ACLs in etcd after a refused creation, want 1", len(got))
	}
}

// Credentials and ACLs shared in etcd: a copy that stopped following (etcd down) catches up when etcd is
// back: the watch ends and the key is reloaded, or the watch resumes.
func TestFollowsAcrossEtcdRestart(t *testing.T) {
	srv := etcdtest.Start(t)
	d := open(t, srv, ScramKey(prefix), Options{RetryInterval: 50 * time.Millisecond})
	reader := auth.NewSharedStore(d)
	srv.Restart()
	writer := auth.NewSharedStore(open(t, srv, ScramKey(prefix), Options{}))
	c, _ := auth.NewCredential(auth.ScramSHA512, []byte("pw"), auth.MinIterations)
	if err := writer.SetCredential("after", auth.ScramSHA512, c); err != nil {
		t.Fatal(err)
	}
	waitUsers(t, reader, 1)
}

// Credentials and ACLs shared in etcd: an ACL document that does not parse stops a store from opening (a
// node does not start), and one that stops parsing later keeps the last
// good set and refuses changes until it is repaired.
func TestCorruptACLDocument(t *testing.T) {
	srv := etcdtest.Start(t)
	cli := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, ACLKey(prefix), "not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewSharedACLStore(open(t, srv, ACLKey(prefix), Options{}), 0); err == nil {
		t.Fatal("an ACL store opened over a corrupt document")
	}
	if _, err := cli.Delete(ctx, ACLKey(prefix)); err != nil {
		t.Fatal(err)
	}
	d := open(t, srv, ACLKey(prefix), Options{})
	store, err := auth.NewSharedACLStore(d, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: "t", PatternType: auth.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: auth.OpRead, Permission: auth.PermissionDeny}
	if err := store.Create([]auth.ACL{a}); err != nil {
		t.Fatal(err)
	}
	put, err := cli.Put(ctx, ACLKey(prefix), "not json")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, rev := d.Load(); rev >= put.Header.Revision {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the corrupt document never reached the copy")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := store.ACLs(); len(got) != 1 || got[0] != a {
		t.Fatalf("ACLs %v after the document broke, want the last good set", got)
	}
	if err := store.Create([]auth.ACL{a}); err == nil {
		t.Fatal("a change over a corrupt document succeeded")
	}
}
