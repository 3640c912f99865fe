package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/cluster/etcdtest"
)

// Credentials and ACLs shared in etcd: with the cluster's settings, `kgateway users` changes the
// cluster's credentials in etcd, not a data directory's file: a user it
// adds logs in on a running node at once, and one it deletes no longer.
func TestUsersCluster(t *testing.T) {
	srv := etcdtest.Start(t)
	bucket := (&url.URL{Scheme: "file", Path: t.TempDir()}).String()
	dir := t.TempDir()
	clusterArgs := []string{"--cluster-etcd-endpoints", srv.Endpoint(), "--object-store-url", bucket, "--data-dir", dir}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("erin-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCmd(append([]string{"users", "add", "erin", "--password-file", pwFile}, clusterArgs...)...); code != 0 {
		t.Fatalf("users add: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, auth.StoreFile)); err == nil {
		t.Fatal("users add wrote the data directory's file, not etcd")
	}
	g := startTestWith(t, dir, func(c *Config) {
		c.Listeners = "SASL_PLAINTEXT://127.0.0.1:0"
		c.SASLEnabledMechanisms = "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"
		c.FailedAuthDelayMs = 1
		c.ClusterEtcdEndpoints, c.ObjectStoreURL, c.ClusterSessionMs = srv.Endpoint(), bucket, 1000
	})
	if err := login(t, g, scram256("erin", "erin-pw")); err != nil {
		t.Fatalf("erin added in etcd: %v", err)
	}
	code, out, _ := runCmd(append([]string{"users", "list"}, clusterArgs...)...)
	if code != 0 || !strings.Contains(out, "erin") {
		t.Fatalf("users list: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCmd(append([]string{"users", "delete", "erin"}, clusterArgs...)...); code != 0 {
		t.Fatalf("users delete: %s", errOut)
	}
	deadline := time.Now().Add(10 * time.Second)
	for login(t, g, scram256("erin", "erin-pw")) == nil {
		if time.Now().After(deadline) {
			t.Fatal("a user deleted in etcd still logs in")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
