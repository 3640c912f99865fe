package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// netLab puts each node on a test host of its own: a network namespace
// joined to the test's namespace by a veth pair, so that the network
// between a node and etcd, the object store or its clients can be cut,
// whole or in one direction, while the processes run on. The namespaces
// are the project's own test hosts; no packet leaves the machine.
//
// Addresses: node i's host is nodeIP(i) (its veth end in its namespace),
// reached from the test's namespace through hostIP(i) (the other end),
// which is also where its clients' packets come from. etcd and the object
// store are reached at two addresses of their own on the test namespace's
// loopback (etcdIP, s3IP), each through a link proxy per node, so a cut
// can tell them apart.
//
// A cut is a tc filter steering the matching packets into a class whose
// qdisc drops everything (htb, u32 and blackhole: what this kernel
// offers): packets vanish, as on a broken network, rather than being
// refused. Each side of a veth carries the filters of one direction.
type netLab struct {
	t      testing.TB
	prefix string // names of this run's namespaces and links
	net    string // first two octets of this run's addresses, e.g. "10.123"
	hosts  []*netHost
	lo     []string // addresses added to the loopback, removed at the end
}

// netHost is one node's namespace and veth pair.
type netHost struct {
	ns             string
	hostIf, nodeIf string
	hostIP, nodeIP string
}

// Directions of a cut, from the node's side.
type cutDir int

const (
	cutBoth cutDir = iota
	cutOut         // the node's packets to the peer are dropped
	cutIn          // the peer's packets to the node are dropped
)

// newNetLab prepares the test namespace's side: the service addresses on
// its loopback. It skips the test where network namespaces cannot be
// made (not root, or no iproute2).
func newNetLab(t testing.TB) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network partitions need root (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network partitions need iproute2's ip")
	}
	pid := os.Getpid()
	l := &netLab{t: t, prefix: fmt.Sprintf("kg%d", pid%100000), net: fmt.Sprintf("10.%d", 100+pid%100)}
	t.Cleanup(l.close)
	for _, ip := range []string{l.etcdIP(), l.s3IP()} {
		l.run("ip", "addr", "add", ip+"/32", "dev", "lo")
		l.lo = append(l.lo, ip)
	}
	return l
}

// etcdIP and s3IP are where the nodes reach etcd and the object store.
func (l *netLab) etcdIP() string { return l.net + ".250.1" }
func (l *netLab) s3IP() string   { return l.net + ".250.2" }

// add makes the next node's host: its namespace, a veth pair with an
// address on each end, a default route back, and on both ends the qdisc
// that cuts attach filters to.
func (l *netLab) add() *netHost {
	l.t.Helper()
	i := len(l.hosts)
	h := &netHost{
		ns:     fmt.Sprintf("%s-n%d", l.prefix, i),
		hostIf: fmt.Sprintf("%sh%d", l.prefix, i),
		nodeIf: fmt.Sprintf("%sn%d", l.prefix, i),
		hostIP: fmt.Sprintf("%s.%d.1", l.net, i),
		nodeIP: fmt.Sprintf("%s.%d.2", l.net, i),
	}
	l.hosts = append(l.hosts, h)
	l.run("ip", "netns", "add", h.ns)
	l.run("ip", "link", "add", h.hostIf, "type", "veth", "peer", "name", h.nodeIf)
	l.run("ip", "link", "set", h.nodeIf, "netns", h.ns)
	l.run("ip", "addr", "add", h.hostIP+"/30", "dev", h.hostIf)
	l.run("ip", "link", "set", h.hostIf, "up")
	l.inNS(h, "ip", "addr", "add", h.nodeIP+"/30", "dev", h.nodeIf)
	l.inNS(h, "ip", "link", "set", h.nodeIf, "up")
	l.inNS(h, "ip", "link", "set", "lo", "up")
	l.inNS(h, "ip", "route", "add", "default", "via", h.hostIP)
	l.dropClass(nil, h.hostIf)
	l.dropClass(h, h.nodeIf)
	return h
}

// dropClass sets dev's root qdisc: class 1:1 passes (the default), class
// 1:2 drops every packet a filter steers into it.
func (l *netLab) dropClass(h *netHost, dev string) {
	l.tc(h, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1")
	l.tc(h, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", "100gbit")
	l.tc(h, "class", "add", "dev", dev, "parent", "1:", "classid", "1:2", "htb", "rate", "8bit")
	l.tc(h, "qdisc", "add", "dev", dev, "parent", "1:2", "handle", "2:", "blackhole")
}

// cut drops the packets between h's node and peer (an address of the test
// namespace: etcdIP, s3IP, or hostIP for its clients) in dir.
func (l *netLab) cut(h *netHost, peer string, dir cutDir) {
	l.t.Helper()
	if dir != cutIn { // leaving the node: its end's egress
		l.tc(h, "filter", "add", "dev", h.nodeIf, "parent", "1:", "protocol", "ip", "prio", "1",
			"u32", "match", "ip", "dst", peer+"/32", "flowid", "1:2")
	}
	if dir != cutOut { // reaching the node: the test end's egress
		l.tc(nil, "filter", "add", "dev", h.hostIf, "parent", "1:", "protocol", "ip", "prio", "1",
			"u32", "match", "ip", "src", peer+"/32", "match", "ip", "dst", h.nodeIP+"/32", "flowid", "1:2")
	}
}

// heal removes every cut of h.
func (l *netLab) heal(h *netHost) {
	l.t.Helper()
	l.tcMaybe(h, "filter", "del", "dev", h.nodeIf, "parent", "1:", "prio", "1")
	l.tcMaybe(nil, "filter", "del", "dev", h.hostIf, "parent", "1:", "prio", "1")
}

// command is argv run in h's namespace.
func (h *netHost) command(argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.ns}, argv...)...)
}

func (l *netLab) tc(h *netHost, args ...string) {
	l.t.Helper()
	if h == nil {
		l.run("tc", args...)
		return
	}
	l.inNS(h, append([]string{"tc"}, args...)...)
}

// tcMaybe is tc where "nothing to delete" is fine.
func (l *netLab) tcMaybe(h *netHost, args ...string) {
	argv := append([]string{"tc"}, args...)
	if h != nil {
		argv = append([]string{"ip", "netns", "exec", h.ns}, argv...)
	}
	exec.Command(argv[0], argv[1:]...).Run()
}

func (l *netLab) inNS(h *netHost, args ...string) {
	l.t.Helper()
	l.run("ip", append([]string{"netns", "exec", h.ns}, args...)...)
}

func (l *netLab) run(name string, args ...string) {
	l.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// close removes the namespaces (their veth pairs go with them) and the
// loopback addresses. It runs after the nodes are killed.
func (l *netLab) close() {
	for _, h := range l.hosts {
		exec.Command("ip", "netns", "del", h.ns).Run()
	}
	for _, ip := range l.lo {
		exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run()
	}
}
