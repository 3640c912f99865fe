package txnmark

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A transaction's markers, all its partitions at once (one decision
// transaction, direct markers on led partitions).

// Partition names one partition of a transaction.
type Partition struct {
	Topic     string
	Partition int32
}

// WriteTxnMarkers decides producer pid's transaction at epoch on every
// partition of parts and returns once each marker is durable, wherever
// its partition lives; errs[i] is parts[i]'s outcome.
//
// One decision transaction: every decision is written in one etcd
// transaction under the coordinator ownership (more only when parts
// outnumber Options.MaxTxnOps): a decision record for each partition
// another node leads, a deletion of the record of each partition this
// node leads. Direct markers: this node writes the marker of each
// partition it leads itself, through its resolver, once that guarded
// transaction committed and while it holds the partition's key lock
// (keyLocks), so that a coordinator that lost the role writes no marker
// and no registration of a later transaction is applied here in
// between. A marker that fails here goes the record's way. The
// records of the other partitions are applied by their leaders as
// WriteTxnMarker's are.
func (r *Relay) WriteTxnMarkers(pid int64, epoch int16, commit bool, parts []Partition) []error {
	errs := make([]error, len(parts))
	g := r.coord.Load()
	if g == nil {
		for i := range errs {
			errs[i] = ErrNotCoordinator
		}
		return errs
	}
	v, err := json.Marshal(record{Epoch: epoch, Decision: decision(commit)})
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	keys := make([]string, len(parts))
	owns := make([]owner.Ownership, len(parts))
	led := make([]bool, len(parts))
	var local []string
	ops := make([]clientv3.Op, len(parts))
	for i, p := range parts {
		keys[i] = r.key(p.Topic, p.Partition, pid)
		owns[i], led[i] = r.serving(p.Topic, p.Partition)
		if led[i] {
			local = append(local, keys[i])
			ops[i] = clientv3.OpDelete(keys[i])
		} else {
			ops[i] = clientv3.OpPut(keys[i], string(v))
		}
	}
	unlock := r.locks.lockAll(r, local)
	revs, derrs := r.decide(*g, ops)
	var wg sync.WaitGroup
	for i, p := range parts {
		if !led[i] || derrs[i] != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The ownership the decision was taken under, still: a
			// partition handed over meanwhile goes the record's way.
			if o, ok := r.serving(p.Topic, p.Partition); !ok || o.Epoch != owns[i].Epoch {
				led[i] = false
				return
			}
			if err := r.parts.WriteTxnMarker(p.Topic, p.Partition, pid, epoch, commit, 0); err != nil {
				led[i] = false
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	for i := range parts {
		if derrs[i] == nil && ops[i].IsDelete() {
			// The registration deleted at revs[i] is never applied
			// here again, even by an applier already holding its job.
			r.mu.floors[r.rel(keys[i])] = revs[i]
		}
	}
	r.mu.Unlock()
	unlock()
	return r.awaitMarkers(parts, keys, ops, revs, derrs, led, string(v), *g, errs)
}

// awaitMarkers finishes WriteTxnMarkers: the partitions whose direct
// marker failed get their decision record, and every decision record is
// waited for until its leader deleted it (the marker durable there).
func (r *Relay) awaitMarkers(parts []Partition, keys []string, ops []clientv3.Op, revs []int64, derrs []error, led []bool, v string, g []clientv3.Cmp, errs []error) []error {
	var retry []int
	var rops []clientv3.Op
	for i := range parts {
		if derrs[i] == nil && ops[i].IsDelete() && !led[i] {
			retry = append(retry, i)
			rops = append(rops, clientv3.OpPut(keys[i], v))
		}
	}
	if len(retry) > 0 {
		rrevs, rerrs := r.decide(g, rops)
		for j, i := range retry {
			revs[i], derrs[i], ops[i] = rrevs[j], rerrs[j], rops[j]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.MarkerTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, p := range parts {
		switch {
		case derrs[i] != nil:
			errs[i] = derrs[i]
			continue
		case ops[i].IsDelete():
			continue // written here, durable
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.awaitRecord(ctx, p, keys[i], revs[i])
		}()
	}
	wg.Wait()
	return errs
}

// awaitRecord waits until key's decision record, written at rev, is
// gone: its leader wrote the marker. A partition that no longer exists
// (Options.Exists) never gets a leader: its record is deleted and nil
// returned.
func (r *Relay) awaitRecord(ctx context.Context, p Partition, key string, rev int64) error {
	err := r.waitGone(ctx, key, rev)
	if err != nil && r.opts.Exists != nil && !r.opts.Exists(p.Topic, p.Partition) {
		return r.forget(key)
	}
	if err != nil {
		return fmt.Errorf("txnmark: marker on %s/%d: %w", p.Topic, p.Partition, err)
	}
	return nil
}

// decide commits ops under the coordinator guard g, in as few etcd
// transactions as etcd's --max-txn-ops allows (one decision
// transaction), and returns each operation's revision and error.
func (r *Relay) decide(g []clientv3.Cmp, ops []clientv3.Op) ([]int64, []error) {
	revs := make([]int64, len(ops))
	errs := make([]error, len(ops))
	for from := 0; from < len(ops); {
		to := min(len(ops), from+r.opts.MaxTxnOps)
		rev, err := r.commitGuarded(g, ops[from:to])
		for i := from; i < to; i++ {
			revs[i], errs[i] = rev, err
		}
		from = to
	}
	return revs, errs
}

// commitGuarded commits ops in one etcd transaction under the
// coordinator guard g (coordinator-fenced records) and returns its
// revision.
func (r *Relay) commitGuarded(g []clientv3.Cmp, ops []clientv3.Op) (int64, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Txn(ctx).If(g...).Then(ops...).Commit()
	if err != nil {
		return 0, fmt.Errorf("txnmark: write decisions: %w", err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("%w: %w", ErrNotCoordinator, owner.ErrFenced)
	}
	return resp.Header.Revision, nil
}

func decision(commit bool) string {
	if commit {
		return "commit"
	}
	return "abort"
}

// rel is a key below dir.
func (r *Relay) rel(key string) string { return key[len(r.dir):] }

// keyLocks serializes what this node does to one partition's share of
// one producer's transactions (keys below dir): a direct marker, an
// applier, a verification. A direct marker holds its keys from before
// its decision transaction until the marker is durable, so a
// registration of a later transaction (applied or verified here) comes
// after it, never between the fence and the marker.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	refs int
}

// lock takes key's lock (a key below dir) and returns its unlock.
func (l *keyLocks) lock(key string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	k := l.m[key]
	if k == nil {
		k = &keyLock{}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	k.Lock()
	return func() {
		k.Unlock()
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}

// lockAll takes the locks of full keys in order (no two takers wait for
// each other) and returns one unlock for all.
func (l *keyLocks) lockAll(r *Relay, keys []string) func() {
	rel := make([]string, 0, len(keys))
	for _, k := range keys {
		rel = append(rel, r.rel(k))
	}
	sort.Strings(rel)
	var unlocks []func()
	for i, k := range rel {
		if i > 0 && rel[i-1] == k {
			continue
		}
		unlocks = append(unlocks, l.lock(k))
	}
	return func() {
		for _, u := range unlocks {
			u()
		}
	}
}
