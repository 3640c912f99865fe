// Package status reads a cluster's state from etcd for operators
// (kgateway cluster status): the live nodes and their sessions, who owns
// each partition and the coordinator role at which fencing epoch, and
// the backlogs of the published copy (uploads in flight, ranges to
// merge, objects to collect). It only reads: it takes no lease and
// writes nothing, so it is safe beside a running cluster.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kgateway/kgateway/cluster/catalog"
	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/node"
	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Status is a cluster as etcd holds it.
type Status struct {
	Nodes       []Node
	Sessions    []Session
	Coordinator Owner
	Partitions  []Partition
	// Objects, Unreferenced, Tombstones and Pins are the object records
	// (diskless Inventory): Unreferenced and Tombstones are the
	// collection backlog.
	Objects, Unreferenced, Tombstones, Pins int
}

// Node is a registered (live) node.
type Node struct {
	ID    int32
	Host  string
	Port  int32
	Rack  string
	Lease int64
	// Stats is the node's last stats record (node.StatsDir); nil when it
	// published none.
	Stats *node.PublishedStats
}

// Session is an etcd lease: a node's session, a previous incarnation's
// not yet expired, or another client's.
type Session struct {
	Lease int64
	TTL   int64 // seconds left
	// Node is the node id registered under it, "" for none.
	Node string
	// Owns counts the ownerships (owner keys) attached to it.
	Owns int
}

// Owner is an ownership: the owning node ("" for none) and the epoch.
type Owner struct {
	Node  string
	Epoch uint64
}

// Partition is one partition's placement and published log.
type Partition struct {
	PKey      string
	Topic     string // "" when no catalog record names it
	Partition int32
	Owner
	Start, End int64
	Ranges     int // range records
	Mergeable  int // of them, in runs merge would replace
}

// Read reads the cluster under prefix (with its trailing slash).
func Read(ctx context.Context, cli *clientv3.Client, prefix string) (Status, error) {
	var st Status
	if err := st.readNodes(ctx, cli, prefix); err != nil {
		return st, err
	}
	owners, epochs, err := readOwners(ctx, cli, prefix)
	if err != nil {
		return st, err
	}
	if err := st.readSessions(ctx, cli, prefix); err != nil {
		return st, err
	}
	inv, err := diskless.ReadInventory(ctx, cli, prefix, diskless.Options{})
	if err != nil {
		return st, err
	}
	st.Objects, st.Unreferenced, st.Tombstones, st.Pins = inv.Objects, inv.Unreferenced, inv.Tombstones, inv.Pins
	topics, err := catalog.ReadTopics(ctx, cli, prefix)
	if err != nil {
		return st, err
	}
	ownerOf := func(pkey string) Owner {
		if r, ok := owners[pkey]; ok {
			return Owner{Node: r.Node, Epoch: r.Epoch}
		}
		return Owner{Epoch: epochs[pkey]}
	}
	st.Coordinator = ownerOf(node.CoordinatorKey)
	seen := map[string]bool{node.CoordinatorKey: true}
	add := func(p Partition) {
		seen[p.PKey] = true
		p.Owner = ownerOf(p.PKey)
		if l, ok := inv.Partitions[p.PKey]; ok {
			p.Start, p.End, p.Ranges, p.Mergeable = l.Start, l.End, l.Ranges, l.Mergeable
		}
		st.Partitions = append(st.Partitions, p)
	}
	for _, t := range topics {
		for i := range t.Partitions {
			add(Partition{PKey: node.PKey(t.ID, i), Topic: t.Name, Partition: i})
		}
	}
	// Records of partitions no topic names (a topic being deleted).
	var stray []string
	for pkey := range inv.Partitions {
		if !seen[pkey] {
			stray = append(stray, pkey)
		}
	}
	for pkey := range owners {
		if !seen[pkey] && !strings.HasPrefix(pkey, node.CoordinatorKey) {
			stray = append(stray, pkey)
		}
	}
	sort.Strings(stray)
	for _, pkey := range stray {
		if !seen[pkey] {
			add(Partition{PKey: pkey, Partition: -1})
		}
	}
	return st, nil
}

func (st *Status) readNodes(ctx context.Context, cli *clientv3.Client, prefix string) error {
	resp, err := cli.Get(ctx, prefix+"nodes/", clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("status: read nodes: %w", err)
	}
	stats, err := cli.Get(ctx, prefix+node.StatsDir, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("status: read node stats: %w", err)
	}
	byID := map[string]*node.PublishedStats{}
	for _, kv := range stats.Kvs {
		var ps node.PublishedStats
		if json.Unmarshal(kv.Value, &ps) == nil {
			byID[strings.TrimPrefix(string(kv.Key), prefix+node.StatsDir)] = &ps
		}
	}
	for _, kv := range resp.Kvs {
		k := strings.TrimPrefix(string(kv.Key), prefix+"nodes/")
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			continue
		}
		host, port, rack, err := node.ParseRegistration(kv.Value)
		if err != nil {
			return err
		}
		n := Node{ID: int32(id), Host: host, Port: port, Lease: kv.Lease, Stats: byID[k]}
		if rack != nil {
			n.Rack = *rack
		}
		st.Nodes = append(st.Nodes, n)
	}
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].ID < st.Nodes[j].ID })
	return nil
}

// readOwners reads every owner record and every epoch (the epoch of a
// partition with no owner now is its last owner's).
func readOwners(ctx context.Context, cli *clientv3.Client, prefix string) (map[string]owner.Record, map[string]uint64, error) {
	resp, err := cli.Get(ctx, prefix+"owner/", clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("status: read owners: %w", err)
	}
	owners := map[string]owner.Record{}
	for _, kv := range resp.Kvs {
		r, err := owner.ParseRecord(kv.Value)
		if err != nil {
			return nil, nil, err
		}
		owners[strings.TrimPrefix(string(kv.Key), prefix+"owner/")] = r
	}
	ep, err := cli.Get(ctx, prefix+"epoch/", clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("status: read epochs: %w", err)
	}
	epochs := map[string]uint64{}
	for _, kv := range ep.Kvs {
		if e, err := strconv.ParseUint(string(kv.Value), 10, 64); err == nil {
			epochs[strings.TrimPrefix(string(kv.Key), prefix+"epoch/")] = e
		}
	}
	return owners, epochs, nil
}

// readSessions lists the leases that hold a registration or an
// ownership under prefix, with their time left.
func (st *Status) readSessions(ctx context.Context, cli *clientv3.Client, prefix string) error {
	byLease := map[int64]*Session{}
	get := func(l int64) *Session {
		if byLease[l] == nil {
			byLease[l] = &Session{Lease: l}
		}
		return byLease[l]
	}
	for _, n := range st.Nodes {
		if n.Lease != 0 {
			get(n.Lease).Node = strconv.Itoa(int(n.ID))
		}
	}
	resp, err := cli.Get(ctx, prefix+"owner/", clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("status: read owners: %w", err)
	}
	for _, kv := range resp.Kvs {
		if kv.Lease != 0 {
			get(kv.Lease).Owns++
		}
	}
	for l, s := range byLease {
		ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(l))
		if err != nil {
			return fmt.Errorf("status: lease %x: %w", l, err)
		}
		s.TTL = ttl.TTL
		st.Sessions = append(st.Sessions, *s)
	}
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].Lease < st.Sessions[j].Lease })
	return nil
}

// Write prints st as tables: nodes, sessions, coordinator, partitions,
// objects.
func (st Status) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tRACK\tSESSION\tHELD\tSERVING\tUPLOADS\tUPLOAD BYTES\tMERGE BACKLOG\tCOLLECT BACKLOG\tFENCED\tSTATS AGE")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%d\t%s:%d\t%s\t%x\t", n.ID, n.Host, n.Port, dash(n.Rack), n.Lease)
		if s := n.Stats; s != nil {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Held, s.Serving, s.UploadCommits, s.UploadBytes,
				s.MergeBacklog, s.CollectBacklog, s.Fenced, time.Since(s.At).Round(time.Second))
		} else {
			fmt.Fprintln(tw, "-\t-\t-\t-\t-\t-\t-\t-")
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SESSION\tTTL\tNODE\tOWNERSHIPS")
	for _, s := range st.Sessions {
		fmt.Fprintf(tw, "%x\t%ds\t%s\t%d\n", s.Lease, s.TTL, dash(s.Node), s.Owns)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "COORDINATOR\tnode %s\tepoch %d\n", dash(st.Coordinator.Node), st.Coordinator.Epoch)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tOWNER\tEPOCH\tSTART\tEND\tRANGES\tMERGEABLE")
	for _, p := range st.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\n", dash(p.Topic), p.Partition, dash(p.Node), p.Epoch, p.Start, p.End, p.Ranges, p.Mergeable)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "OBJECTS\t%d\tunreferenced %d\ttombstones %d\tpins %d\n", st.Objects, st.Unreferenced, st.Tombstones, st.Pins)
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
