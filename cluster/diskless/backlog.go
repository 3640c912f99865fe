package diskless

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// backlog is what Merge and Collect left for later, as their last
// passes saw it: operators watch it grow when upkeep falls behind.
type backlog struct {
	mu      sync.Mutex
	merge   map[string]int // pkey: range records in runs Merge would replace
	collect int            // objects the last Collect found unreferenced and left
}

// mergeable is how many of st's range records are in runs Merge would
// replace (pickRun), every run counted.
func (c *Committer) mergeable(st logState) int {
	n := 0
	for {
		i, j := c.pickRun(st)
		if j-i < 2 {
			return n
		}
		n += j - i
		st.ranges, st.revs = st.ranges[j:], st.revs[j:]
	}
}

func (b *backlog) setMerge(pkey string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.merge == nil {
		b.merge = map[string]int{}
	}
	if n == 0 {
		delete(b.merge, pkey)
		return
	}
	b.merge[pkey] = n
}

// MergeBacklog is how many range records of pkeys were left in runs
// Merge would replace, as each partition's last Merge here saw them; a
// partition never merged here counts 0.
func (c *Committer) MergeBacklog(pkeys ...string) int {
	c.backlog.mu.Lock()
	defer c.backlog.mu.Unlock()
	n := 0
	for _, p := range pkeys {
		n += c.backlog.merge[p]
	}
	return n
}

// CollectBacklog is how many objects the last Collect here found
// unreferenced (or condemned orphans) and had to leave: pinned, changed
// meanwhile, or a tombstone younger than OrphanAge.
func (c *Committer) CollectBacklog() int {
	c.backlog.mu.Lock()
	defer c.backlog.mu.Unlock()
	return c.backlog.collect
}

// Inventory is the published copy's bookkeeping as etcd holds it, for
// operators (kgateway cluster status).
type Inventory struct {
	Partitions map[string]PartitionInventory // by pkey
	// Objects is how many objects have a record; Unreferenced how many
	// of them count no reference (Collect's backlog); Tombstones how
	// many are condemned orphans waiting to go.
	Objects, Unreferenced, Tombstones int
	Pins                              int // reader pins held (pinned objects kept)
}

// PartitionInventory is one partition's published log.
type PartitionInventory struct {
	Start, End int64
	Ranges     int // range records, any below the start included
	Mergeable  int // of them in runs Merge would replace (its backlog)
	HasState   bool
}

// ReadInventory reads every partition's records and every object record
// under prefix at one revision. opts.MergeBelow and MergeMax decide what
// counts as mergeable, as for a Committer.
func ReadInventory(ctx context.Context, cli *clientv3.Client, prefix string, opts Options) (Inventory, error) {
	c := New(cli, nil, nil, prefix, "", opts)
	resp, err := cli.Get(ctx, prefix+"log/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return Inventory{}, fmt.Errorf("diskless: inventory: %w", err)
	}
	inv := Inventory{Partitions: map[string]PartitionInventory{}}
	states := map[string]*logState{}
	var order []string
	for _, kv := range resp.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), prefix+"log/")
		pkey, sub, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		st := states[pkey]
		if st == nil {
			st = &logState{}
			states[pkey] = st
			order = append(order, pkey)
		}
		switch {
		case sub == "start" || sub == "end":
			v, err := strconv.ParseInt(string(kv.Value), 10, 64)
			if err != nil {
				return Inventory{}, fmt.Errorf("diskless: inventory: %q: %w", kv.Key, err)
			}
			if sub == "start" {
				st.start = v
			} else {
				st.end = v
			}
		case sub == "state":
			st.state = &stateRecord{}
		case strings.HasPrefix(sub, "r/"):
			r, err := decodeRange(pkey, string(kv.Key), kv.Value)
			if err != nil {
				return Inventory{}, err
			}
			st.ranges = append(st.ranges, r)
			st.revs = append(st.revs, kv.ModRevision)
		}
	}
	for _, pkey := range order {
		st := states[pkey]
		inv.Partitions[pkey] = PartitionInventory{Start: st.start, End: st.end, Ranges: len(st.ranges),
			Mergeable: c.mergeable(*st), HasState: st.state != nil}
	}
	objs, err := cli.Get(ctx, c.objPrefix(), clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision))
	if err != nil {
		return Inventory{}, fmt.Errorf("diskless: inventory: %w", err)
	}
	for _, kv := range objs.Kvs {
		st, err := decodeObj(string(kv.Key), kv.Value, kv.ModRevision)
		if err != nil {
			return Inventory{}, err
		}
		inv.Objects++
		switch {
		case st.Dead != 0:
			inv.Tombstones++
		case st.Refs == 0:
			inv.Unreferenced++
		}
	}
	pins, err := cli.Get(ctx, prefix+"pin/", clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(resp.Header.Revision))
	if err != nil {
		return Inventory{}, fmt.Errorf("diskless: inventory: %w", err)
	}
	inv.Pins = int(pins.Count)
	return inv, nil
}
