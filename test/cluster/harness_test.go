// Package cluster tests cluster mode as it runs: real processes on
// 127.0.0.1 with ephemeral ports — an embedded etcd (cluster/etcdtest) or
// a three-member cluster of the etcd server binary (test/etcdserver),
// an S3 server (test/s3server) and several kgateway binaries — driven by
// franz-go clients, with faults: SIGKILL, SIGSTOP past the session,
// graceful stops, etcd restarts and outages, a held etcd link. Waits are
// on conditions with deadlines. KGW_SOAK=1 makes the nemesis run ten
// minutes; KGW_CLUSTER_LOGS=dir keeps every node's log.
package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kgateway/kgateway/cluster/etcdtest"
	"github.com/kgateway/kgateway/test/etcdserver"
	"github.com/kgateway/kgateway/test/kgbin"
	"github.com/kgateway/kgateway/test/s3server"
	"github.com/twmb/franz-go/pkg/kgo"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The cluster's settings: a short session, so that a dead or paused node
// loses its partitions within seconds, and the default key prefix.
const (
	sessionTimeout = 2 * time.Second
	etcdPrefix     = "/kgateway/"
	// startTimeout bounds a node's start until its "ready" log line, and
	// stopTimeout a graceful stop (generous: a loaded 2-core machine).
	startTimeout = 90 * time.Second
	stopTimeout  = 60 * time.Second
)

func TestMain(m *testing.M) {
	code := m.Run()
	kgbin.Remove()
	os.Exit(code)
}

// kgatewayBinary is cmd/kgateway, built once per test run.
func kgatewayBinary(t testing.TB) string { return kgbin.Path(t) }

// Cluster is a real etcd, a real S3 server and kgateway processes, all on
// 127.0.0.1. Its methods are called from the test's goroutine.
type Cluster struct {
	t testing.TB
	// Etcd is the embedded single-member etcd of StartCluster; Members
	// the real etcd cluster of StartClusterOnMembers. One is nil.
	Etcd    *etcdtest.Server
	Members *etcdserver.Cluster
	S3      *s3server.Server
	// lab puts every node on a test host of its own, where the network
	// can be cut (StartPartitionableCluster); nil: all on 127.0.0.1.
	lab   *netLab
	etcd  *clientv3.Client
	bin   string
	nodes []*Node

	mu      sync.Mutex
	clients map[int]*kgo.Client // per node, seeded with that node only
}

// Node is one kgateway process slot: its id, address and data directory
// stay the same across restarts.
type Node struct {
	ID   int32
	Addr string
	dir  string
	log  string // the process's stderr, every run appended

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the exit status, once exited is closed
	paused bool

	proxies  []*linkProxy // the node's ways to etcd, one per member
	isolated bool         // its etcd links are held
	// metrics is the node's metrics listener (/metrics, /readyz).
	metrics string
	// host is the node's network namespace (a partitionable cluster's),
	// s3 its way to the object store there; nil otherwise.
	host *netHost
	s3   *linkProxy
}

// StartCluster starts etcd, the object store and n nodes (ids 0..n-1),
// and waits until every node is ready.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: kgatewayBinary(t), clients: map[int]*kgo.Client{}}
	c.Etcd = etcdtest.Start(t)
	c.etcd = c.Etcd.Client(t)
	return c.start(n)
}

// StartClusterOnMembers is StartCluster over a real etcd cluster of
// members processes of the etcd server binary (test/etcdserver), each
// node reaching every member.
func StartClusterOnMembers(t testing.TB, n, members int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: kgatewayBinary(t), clients: map[int]*kgo.Client{}}
	c.Members = etcdserver.Start(t, members)
	c.etcd = c.Members.Client(t)
	return c.start(n)
}

// StartPartitionableCluster is StartCluster with every node on a test
// host of its own (netLab), so that Cut can part it from etcd, the object
// store or its clients.
func StartPartitionableCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	lab := newNetLab(t)
	c := &Cluster{t: t, bin: kgatewayBinary(t), clients: map[int]*kgo.Client{}, lab: lab}
	c.Etcd = etcdtest.Start(t)
	c.etcd = c.Etcd.Client(t)
	return c.start(n)
}

func (c *Cluster) start(n int) *Cluster {
	c.S3 = s3server.Start(c.t)
	c.t.Cleanup(c.cleanup)
	for range n {
		c.Add()
	}
	return c
}

// etcdEndpoints are the client URLs of etcd's members.
func (c *Cluster) etcdEndpoints() []string {
	if c.Members != nil {
		return c.Members.Endpoints()
	}
	return []string{c.Etcd.Endpoint()}
}

// Add starts a new node with the next id.
func (c *Cluster) Add() *Node {
	c.t.Helper()
	nd := &Node{
		ID:      int32(len(c.nodes)),
		Addr:    freeAddr(c.t),
		metrics: freeAddr(c.t),
		dir:     c.t.TempDir(),
	}
	proxyHost := "127.0.0.1"
	if c.lab != nil {
		// Its own host: any port is free there, and etcd and the
		// object store are reached at the lab's addresses for them.
		nd.host = c.lab.add()
		nd.Addr = nd.host.nodeIP + ":9092"
		proxyHost = c.lab.etcdIP()
		nd.s3 = newLinkProxyOn(c.t, c.lab.s3IP(), strings.TrimPrefix(c.S3.Endpoint, "http://"))
	}
	for _, ep := range c.etcdEndpoints() {
		nd.proxies = append(nd.proxies, newLinkProxyOn(c.t, proxyHost, strings.TrimPrefix(ep, "http://")))
	}
	nd.log = filepath.Join(c.logDir(), fmt.Sprintf("node-%d.log", nd.ID))
	os.Remove(nd.log) // a previous run's, under KGW_CLUSTER_LOGS
	c.nodes = append(c.nodes, nd)
	c.launch(nd)
	return nd
}

// EnvLogs names a directory that keeps every node's log, under the
// test's name, after the test (they are shown in part when it fails).
const EnvLogs = "KGW_CLUSTER_LOGS"

func (c *Cluster) logDir() string {
	d := os.Getenv(EnvLogs)
	if d == "" {
		return c.t.TempDir()
	}
	d = filepath.Join(d, c.t.Name())
	if err := os.MkdirAll(d, 0o755); err != nil {
		c.t.Fatal(err)
	}
	return d
}

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Len is the number of nodes, running or not.
func (c *Cluster) Len() int { return len(c.nodes) }

// Addrs are every node's address: the seed list of a client.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, nd := range c.nodes {
		out[i] = nd.Addr
	}
	return out
}

// Running reports whether node i's process runs (paused counts).
func (c *Cluster) Running(i int) bool {
	nd := c.nodes[i]
	if nd.cmd == nil {
		return false
	}
	select {
	case <-nd.exited:
		return false
	default:
		return true
	}
}

// Up are the nodes that run, are not paused and reach etcd.
func (c *Cluster) Up() []int {
	var out []int
	for i, nd := range c.nodes {
		if c.Running(i) && !nd.paused && !nd.isolated {
			out = append(out, i)
		}
	}
	return out
}

// Kill kills node i (SIGKILL): no handover, its session lease expires.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	if !c.Running(i) {
		c.t.Fatalf("kill node %d: not running", i)
	}
	nd.cmd.Process.Kill()
	<-nd.exited
	nd.paused = false
}

// Stop stops node i gracefully (SIGTERM) and expects a clean exit.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	if !c.Running(i) {
		c.t.Fatalf("stop node %d: not running", i)
	}
	if nd.paused {
		c.Resume(i)
	}
	nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.exited:
	case <-time.After(stopTimeout):
		nd.cmd.Process.Kill()
		<-nd.exited
		c.t.Fatalf("node %d did not stop within %v of SIGTERM\n%s", i, stopTimeout, c.logTail(nd, 40))
	}
	if nd.err != nil {
		c.t.Fatalf("node %d exit after SIGTERM: %v\n%s", i, nd.err, c.logTail(nd, 40))
	}
}

// Restart starts node i again on the same address and id (killing it
// first if it runs), at once: a killed node's registration lives until
// its lease expires, and the new process takes the id over from it (one registration per node id:
// it revokes the old lease, fencing the dead incarnation), as a Kafka
// broker restarted under its id does.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Running(i) {
		c.Kill(i)
	}
	c.ReleaseEtcd(i)
	c.launch(c.nodes[i])
}

// HoldEtcd stalls node i's link to etcd: what it sends and what etcd
// sends it wait in between (its session is no longer renewed, and it
// learns nothing), while it goes on serving its clients.
func (c *Cluster) HoldEtcd(i int) {
	for _, p := range c.nodes[i].proxies {
		p.Hold()
	}
	c.nodes[i].isolated = true
}

// ReleaseEtcd lets node i's link to etcd go on, what was held first.
func (c *Cluster) ReleaseEtcd(i int) {
	for _, p := range c.nodes[i].proxies {
		p.Release()
	}
	c.nodes[i].isolated = false
}

// Pause freezes node i (SIGSTOP): its sockets stay open and nothing is
// answered; its session lease is no longer renewed.
func (c *Cluster) Pause(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	if !c.Running(i) || nd.paused {
		c.t.Fatalf("pause node %d: not running or already paused", i)
	}
	nd.cmd.Process.Signal(syscall.SIGSTOP)
	nd.paused = true
}

// Resume continues a paused node (SIGCONT).
func (c *Cluster) Resume(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	if !nd.paused {
		c.t.Fatalf("resume node %d: not paused", i)
	}
	nd.cmd.Process.Signal(syscall.SIGCONT)
	nd.paused = false
}

// RestartEtcd stops etcd and starts it again on the same endpoint and
// data.
func (c *Cluster) RestartEtcd() {
	c.t.Helper()
	c.Etcd.Restart()
}

// StopEtcd stops etcd, keeping its data; StartEtcd starts it again.
func (c *Cluster) StopEtcd() { c.Etcd.Stop() }

// StartEtcd starts a stopped etcd on the same endpoint and data.
func (c *Cluster) StartEtcd() {
	c.t.Helper()
	c.Etcd.Restart()
}

// Registered reports whether node i's registration key exists in etcd.
func (c *Cluster) Registered(ctx context.Context, i int) (bool, error) {
	resp, err := c.etcd.Get(ctx, etcdPrefix+"nodes/"+strconv.Itoa(i), clientv3.WithCountOnly())
	if err != nil {
		return false, err
	}
	return resp.Count > 0, nil
}

// waitDeregistered waits until node i's registration is gone (its lease
// expired or it deregistered).
func (c *Cluster) waitDeregistered(i int) {
	c.t.Helper()
	waitFor(c.t, 60*time.Second, fmt.Sprintf("node %d's registration to expire", i), func(ctx context.Context) (bool, error) {
		ok, err := c.Registered(ctx, i)
		return !ok, err
	})
}

// WaitRegistered waits until node i is registered again.
func (c *Cluster) WaitRegistered(i int) {
	c.t.Helper()
	waitFor(c.t, 60*time.Second, fmt.Sprintf("node %d to register", i), func(ctx context.Context) (bool, error) {
		return c.Registered(ctx, i)
	})
}

// objectStoreURL is the node's --object-store-url: the object store's,
// through the node's proxy on a partitionable cluster.
func (c *Cluster) objectStoreURL(nd *Node) string {
	if nd.s3 == nil {
		return c.S3.URL
	}
	return strings.Replace(c.S3.URL, c.S3.Endpoint, "http://"+nd.s3.l.Addr().String(), 1)
}

// etcdURLs is the node's --cluster-etcd-endpoints: its proxies.
func (nd *Node) etcdURLs() string {
	urls := make([]string, len(nd.proxies))
	for i, p := range nd.proxies {
		urls[i] = p.URL()
	}
	return strings.Join(urls, ",")
}

// launch starts nd's process and waits for its "ready" log line.
func (c *Cluster) launch(nd *Node) {
	c.t.Helper()
	logf, err := os.OpenFile(nd.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(logf, "---- start %s\n", time.Now().UTC().Format(time.RFC3339Nano))
	argv := []string{c.bin,
		"--node-id", strconv.Itoa(int(nd.ID)),
		"--cluster-etcd-endpoints", nd.etcdURLs(),
		"--object-store-url", c.objectStoreURL(nd),
		"--listen", nd.Addr,
		"--data-dir", nd.dir,
		"--cluster-session-timeout-ms", strconv.Itoa(int(sessionTimeout.Milliseconds())),
		"--cluster-commit-interval-ms", "5",
		"--metrics-addr", nd.metrics,
		"--group-initial-rebalance-delay-ms", "0", // classic groups rebalance at once
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if nd.host != nil {
		cmd = nd.host.command(argv...) // ip netns exec: the same process, in its namespace
	}
	cmd.Env = append(os.Environ(), s3server.Env()...)
	// The node dies with the test process, even on a kill -9 of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	exited := make(chan struct{})
	ready := make(chan struct{})
	nd.cmd, nd.exited, nd.paused = cmd, exited, false
	go func() {
		defer logf.Close()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		seen := false
		for sc.Scan() {
			logf.Write(append(sc.Bytes(), '\n'))
			var line struct {
				Msg string `json:"msg"`
			}
			if !seen && json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "ready" {
				seen = true
				close(ready)
			}
		}
		nd.err = cmd.Wait()
		close(exited)
	}()
	select {
	case <-ready:
	case <-exited:
		c.t.Fatalf("node %d exited before ready: %v\n%s", nd.ID, nd.err, c.logTail(nd, 40))
	case <-time.After(startTimeout):
		c.t.Fatalf("node %d not ready within %v\n%s", nd.ID, startTimeout, c.logTail(nd, 40))
	}
}

// cleanup kills every node (etcd and the object store stop after, by
// their own cleanups, registered before) and shows the nodes' last log
// lines when the test failed.
func (c *Cluster) cleanup() {
	c.mu.Lock()
	for _, cl := range c.clients {
		cl.Close()
	}
	c.mu.Unlock()
	for i, nd := range c.nodes {
		if c.Running(i) {
			nd.cmd.Process.Signal(syscall.SIGCONT)
			nd.cmd.Process.Kill()
			<-nd.exited
		}
		for _, p := range nd.proxies {
			p.Close()
		}
		if nd.s3 != nil {
			nd.s3.Close()
		}
	}
	if c.t.Failed() {
		for _, nd := range c.nodes {
			c.t.Logf("node %d log (last lines):\n%s", nd.ID, c.logTail(nd, 60))
		}
	}
}

// logTail is the last n lines of nd's log.
func (c *Cluster) logTail(nd *Node, n int) string {
	b, _ := os.ReadFile(nd.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogCount is how many lines of node i's log (every run) contain s.
func (c *Cluster) LogCount(i int, s string) int {
	b, _ := os.ReadFile(c.nodes[i].log)
	return strings.Count(string(b), s)
}

// freeAddr is a loopback address with a port that is free and below the
// kernel's ephemeral range, so no client connection takes it while its
// node is down between a kill and a restart.
func freeAddr(t testing.TB) string {
	t.Helper()
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				lo = v
			}
		}
	}
	if lo <= 12000 {
		lo = 32768
	}
	for range 200 {
		port := 10000 + rand.IntN(lo-10000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// stamp is the time of day, to line a test's log up with the nodes'.
func stamp() string { return time.Now().UTC().Format("15:04:05.000") }

// waitFor polls cond until it holds, failing the test after timeout with
// the last error. Polling is the wait; nothing sleeps for correctness.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := poll(timeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// poll is waitFor returning an error instead of failing.
func poll(timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok, err := cond(ctx)
		cancel()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last == nil {
				last = errors.New("condition still false")
			}
			return fmt.Errorf("not within %v: %w", timeout, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
