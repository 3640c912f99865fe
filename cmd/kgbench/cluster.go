package main

// cluster.go starts kgateway's cluster mode as a system under test,
// "kgateway-cluster": three kgateway nodes over one etcd (the real server
// binary, fsyncing) and an S3 server on loopback (versitygw, POSIX
// backend), the two binaries `make deps` builds into $(go env
// GOPATH)/bin. The system's server CPU and RSS are every process's
// together (nodes, etcd and the object store), since all of them are what
// serving costs; clients seed from node 0 and reach the others through
// Metadata.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	clusterSystem = "kgateway-cluster"
	clusterNodes  = 3
	// The pinned versions test/etcdserver and test/s3server run, and
	// make deps builds.
	clusterEtcdVersion      = "v3.7.3"
	clusterVersitygwVersion = "v1.8.0"
	// The S3 server's credentials and bucket (test/s3server's).
	s3AccessKey = "kgateway-test-access"
	s3SecretKey = "kgateway-test-secret"
	s3Region    = "us-east-1"
	s3Bucket    = "kgateway"
)

func isCluster(name string) bool { return name == clusterSystem }

// startCluster starts etcd, the S3 server and the nodes, and returns node
// 0 as the system, the rest as its peers.
func startCluster(ctx context.Context, h *harness, dir, name string) (*system, error) {
	etcdBin, err := gopathBinary("etcd-" + clusterEtcdVersion)
	if err != nil {
		return nil, err
	}
	s3Bin, err := gopathBinary("versitygw-" + clusterVersitygwVersion)
	if err != nil {
		return nil, err
	}
	kgw, err := h.kgatewayBin(ctx)
	if err != nil {
		return nil, err
	}
	var peers []*system
	fail := func(err error) (*system, error) {
		for _, p := range peers {
			p.stop()
		}
		return nil, err
	}
	etcd, err := startPeer(dir, name+"-etcd")
	if err != nil {
		return fail(err)
	}
	peer, err := freeLoopbackAddr()
	if err != nil {
		return fail(err)
	}
	if err := etcd.launch(etcdBin, []string{"--name", "kgbench", "--data-dir", etcd.dataDir,
		"--listen-client-urls", "http://" + etcd.addr, "--advertise-client-urls", "http://" + etcd.addr,
		"--listen-peer-urls", "http://" + peer, "--initial-advertise-peer-urls", "http://" + peer,
		"--initial-cluster", "kgbench=http://" + peer, "--log-level", "warn"}, os.Environ()); err != nil {
		return fail(err)
	}
	peers = append(peers, etcd)
	if err := etcd.waitReady(ctx, h.cfg.StartTimeout); err != nil {
		return fail(err)
	}
	s3, err := startPeer(dir, name+"-s3")
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Join(s3.dataDir, s3Bucket), 0o755); err != nil {
		return fail(err)
	}
	// One gateway per directory: versitygw's in-process lock per key
	// orders conditional writes, no shared lock file needed (as
	// test/s3server runs it).
	s3args := []string{"--port", s3.addr, "--region", s3Region, "--quiet", "--keep-alive",
		"posix", "--disable-object-lock-file"}
	if !xattrs(s3.dataDir) {
		// test/s3server's rule: sidecar files only where the file
		// system takes no user extended attributes (five more inodes
		// per PUT).
		meta := filepath.Join(dir, name+"-s3-meta")
		if err := os.MkdirAll(meta, 0o755); err != nil {
			return fail(err)
		}
		s3args = append(s3args, "--sidecar", meta)
	}
	s3env := append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s3AccessKey, "ROOT_SECRET_ACCESS_KEY="+s3SecretKey)
	if err := s3.launch(s3Bin, append(s3args, s3.dataDir), s3env); err != nil {
		return fail(err)
	}
	peers = append(peers, s3)
	if err := waitS3(ctx, s3, h.cfg.StartTimeout); err != nil {
		return fail(err)
	}
	url := fmt.Sprintf("s3://%s?endpoint=http://%s&region=%s&use_path_style=true", s3Bucket, s3.addr, s3Region)
	env := append(serverEnv(h.cfg), "AWS_ACCESS_KEY_ID="+s3AccessKey, "AWS_SECRET_ACCESS_KEY="+s3SecretKey, "AWS_REGION="+s3Region)
	var nodes []*system
	for i := range clusterNodes {
		nd, err := startPeer(dir, fmt.Sprintf("%s-node%d", name, i))
		if err != nil {
			return fail(err)
		}
		args := []string{"--node-id", strconv.Itoa(i), "--listen", nd.addr, "--data-dir", nd.dataDir,
			"--cluster-etcd-endpoints", "http://" + etcd.addr, "--object-store-url", url,
			"--metrics-addr", "127.0.0.1:0"}
		args = append(args, strings.Fields(h.cfg.KgatewayArgs)...)
		if err := nd.launch(kgw, args, env); err != nil {
			return fail(err)
		}
		peers = append(peers, nd)
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes {
		if err := nd.waitReady(ctx, h.cfg.StartTimeout); err != nil {
			return fail(err)
		}
	}
	// Node 0 is the system; every other process is its peer.
	s := nodes[0]
	s.name = name
	s.peers = slices.DeleteFunc(peers, func(p *system) bool { return p == s })
	return s, nil
}

// startPeer is a system slot of one process of a composite system: its
// address, data directory and log under dir.
func startPeer(dir, name string) (*system, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	s := &system{name: name, addr: addr, dataDir: filepath.Join(dir, name+"-data"),
		logPath: filepath.Join(dir, name+".log"), exited: make(chan struct{})}
	return s, os.MkdirAll(s.dataDir, 0o755)
}

// waitS3 waits until versitygw answers as itself.
func waitS3(ctx context.Context, s *system, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := s.checkAlive(); err != nil {
			return err
		}
		if resp, err := client.Get("http://" + s.addr + "/"); err == nil {
			resp.Body.Close()
			if resp.Header.Get("Server") == "VERSITYGW" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%w: versitygw on %s after %s", errStartTimeout, s.addr, timeout)
}

// gopathBinary is a binary make deps installs into the first GOPATH's
// bin/.
func gopathBinary(name string) (string, error) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("kgbench: go env GOPATH: %w", err)
	}
	gopath := filepath.SplitList(strings.TrimSpace(string(out)))
	if len(gopath) == 0 || gopath[0] == "" {
		return "", errors.New("kgbench: go env GOPATH is empty")
	}
	p := filepath.Join(gopath[0], "bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %s needs %s: run make deps", errConfig, clusterSystem, p)
	}
	return p, nil
}

// xattrs says whether dir's file system takes user extended attributes,
// where versitygw keeps an object's metadata by default (test/s3server's
// Xattrs).
func xattrs(dir string) bool {
	const probe = "user.kgateway-probe"
	if err := syscall.Setxattr(dir, probe, []byte{1}, 0); err != nil {
		return false
	}
	syscall.Removexattr(dir, probe)
	return true
}
