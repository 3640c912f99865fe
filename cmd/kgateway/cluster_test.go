package main

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
)

// `kgateway cluster status` reads a running cluster's etcd: the node and
// its session, the coordinator's and the partitions' owner and epoch,
// each partition's published log and the objects' bookkeeping; the node
// is ready (/readyz) once it serves what placement gave it. Without
// etcd endpoints, or with another word than status, it is a usage error.
func TestClusterStatus(t *testing.T) {
	srv := etcdtest.Start(t)
	bucket := (&url.URL{Scheme: "file", Path: t.TempDir()}).String()
	g := startTestWith(t, t.TempDir(), func(c *Config) {
		c.ClusterEtcdEndpoints, c.ObjectStoreURL, c.ClusterSessionMs = srv.Endpoint(), bucket, 1000
	})
	cl := newClient(t, g)
	produce(t, cl, "st", "a", "b", "c")
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := httpGet(t, g, "/readyz")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline = time.Now().Add(30 * time.Second)
	args := []string{"cluster", "status", "--cluster-etcd-endpoints", srv.Endpoint(), "--object-store-url", bucket}
	code, out, errOut := runCmd(args...)
	if code != 0 {
		t.Fatalf("cluster status: exit %d\n%s%s", code, out, errOut)
	}
	for _, re := range []string{
		`(?m)^0 +` + regexp.QuoteMeta(g.Addr().String()) + ` +- +[0-9a-f]+ `, // node 0, its address and session
		`(?m)^[0-9a-f]+ +[0-9]+s +0 +2$`,                                     // its session: the node, 2 ownerships
		`(?m)^COORDINATOR +node 0 +epoch 1$`,
		`(?m)^st +0 +0 +1 +0 +3 +[1-3] `, // st/0: owner 0, epoch 1, [0, 3) in 1 to 3 ranges
		`(?m)^OBJECTS +[1-9]`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("cluster status output has no line matching %s:\n%s", re, out)
		}
	}
	// The node's stats record follows within a few seconds (at most
	// every 2 s): 2 slots held and served (st/0 and the coordinator), no
	// upload in flight once the produces are done.
	node := regexp.MustCompile(`(?m)^0 +\S+ +- +[0-9a-f]+ +2 +2 +0 +0 +\d+ +\d+ +0 `)
	for !node.MatchString(out) {
		if time.Now().After(deadline) {
			t.Fatalf("no stats record of node 0 holding and serving 2 slots:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
		if code, out, errOut = runCmd(args...); code != 0 {
			t.Fatalf("cluster status: exit %d\n%s%s", code, out, errOut)
		}
	}
	if code, _, errOut := runCmd("cluster", "status"); code != 2 || !strings.Contains(errOut, "cluster.etcd.endpoints") {
		t.Errorf("without endpoints: exit %d %s, want a usage error naming cluster.etcd.endpoints", code, errOut)
	}
	if code, _, _ := runCmd("cluster", "frobnicate", "--cluster-etcd-endpoints", srv.Endpoint(), "--object-store-url", bucket); code != 2 {
		t.Errorf("cluster frobnicate: exit %d, want 2", code)
	}
}
