// Package etcdserver runs the real etcd server binary for tests: a
// cluster of members on 127.0.0.1 with ephemeral ports, each its own
// process with its data (fsync'd, as in production) in the test's
// temporary directory. A member can be killed (SIGKILL) and started again
// on the same ports and data, so tests show what a kgateway cluster does
// when one member of its etcd dies, and that a quorum keeps serving.
//
// The binary is etcd Version, built from the Go module proxy (`make deps`
// builds it ahead; Binary builds it when it is missing).
package etcdserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// StartTimeout bounds a member's start until the cluster answers through
// it: generous, for a loaded machine.
const StartTimeout = 60 * time.Second

// Cluster is the members of one etcd cluster.
type Cluster struct {
	t       testing.TB
	bin     string
	members []*Member
}

// Member is one etcd process slot: its name, ports and data directory
// stay the same across restarts.
type Member struct {
	Name       string
	ClientURL  string
	peerURL    string
	dir        string
	log        string
	cmd        *exec.Cmd
	exited     chan struct{}
	initialize bool // the first start creates the cluster
}

// Start starts an etcd cluster of n members and waits until every member
// answers; it is stopped when t ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: Binary(t)}
	var initial []string
	for i := range n {
		m := &Member{
			Name:       fmt.Sprintf("m%d", i),
			ClientURL:  "http://" + freeAddr(t),
			peerURL:    "http://" + freeAddr(t),
			dir:        filepath.Join(t.TempDir(), "data"),
			initialize: true,
		}
		m.log = filepath.Join(filepath.Dir(m.dir), "etcd.log")
		initial = append(initial, m.Name+"="+m.peerURL)
		c.members = append(c.members, m)
	}
	t.Cleanup(c.stopAll)
	for _, m := range c.members {
		c.launch(m, strings.Join(initial, ","))
	}
	for i := range c.members {
		c.waitServing(i)
	}
	return c
}

// Endpoints are every member's client URL.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.ClientURL
	}
	return out
}

// Len is the number of members.
func (c *Cluster) Len() int { return len(c.members) }

// Client is a client of every member, closed when the test ends.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cl, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// Running reports whether member i's process runs.
func (c *Cluster) Running(i int) bool {
	m := c.members[i]
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// Kill kills member i (SIGKILL): what it had not fsync'd is gone, as in
// a power cut of its machine.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	m := c.members[i]
	if !c.Running(i) {
		c.t.Fatalf("etcd member %s: not running", m.Name)
	}
	m.cmd.Process.Kill()
	<-m.exited
}

// Restart starts member i again on its ports and data (killing it first
// if it runs) and waits until it serves.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Running(i) {
		c.Kill(i)
	}
	c.launch(c.members[i], "")
	c.waitServing(i)
}

// launch starts m's process. initial is the initial cluster of a first
// start; a restart finds its membership in its data directory.
func (c *Cluster) launch(m *Member, initial string) {
	c.t.Helper()
	peerHost := strings.TrimPrefix(m.peerURL, "http://")
	clientHost := strings.TrimPrefix(m.ClientURL, "http://")
	args := []string{
		"--name", m.Name,
		"--data-dir", m.dir,
		"--listen-client-urls", "http://" + clientHost,
		"--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", "http://" + peerHost,
		"--initial-advertise-peer-urls", m.peerURL,
		"--log-level", "warn",
		// Loopback: elections within a second, not the defaults meant
		// for a network (100 ms heartbeats, 1 s elections).
		"--heartbeat-interval", "50",
		"--election-timeout", "500",
	}
	if m.initialize {
		args = append(args, "--initial-cluster", initial, "--initial-cluster-state", "new", "--initial-cluster-token", "kgateway-test")
		m.initialize = false
	}
	logf, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The member dies with the test process, even on a kill -9 of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("start etcd member %s: %v", m.Name, err)
	}
	exited := make(chan struct{})
	m.cmd, m.exited = cmd, exited
	go func() {
		cmd.Wait()
		logf.Close()
		close(exited)
	}()
}

// waitServing waits until member i answers a linearizable read, which
// needs a quorum behind it.
func (c *Cluster) waitServing(i int) {
	c.t.Helper()
	m := c.members[i]
	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(StartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cl.Get(ctx, "health")
		cancel()
		if err == nil {
			return
		}
		select {
		case <-m.exited:
			c.t.Fatalf("etcd member %s exited: %s", m.Name, c.logTail(m))
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("etcd member %s not serving within %v: %v\n%s", m.Name, StartTimeout, err, c.logTail(m))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) stopAll() {
	for i, m := range c.members {
		if c.Running(i) {
			m.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-m.exited:
			case <-time.After(10 * time.Second):
				m.cmd.Process.Kill()
				<-m.exited
			}
		}
	}
	if c.t.Failed() {
		for _, m := range c.members {
			c.t.Logf("etcd member %s log (last lines):\n%s", m.Name, c.logTail(m))
		}
	}
}

func (c *Cluster) logTail(m *Member) string {
	b, _ := os.ReadFile(m.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
