package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Errors of Acquire and Fenced.
var (
	// ErrOwned: another session owns the partition (one owner at a time).
	ErrOwned = errors.New("owner: partition owned by another node")
	// ErrFenced: an ownership the transaction was conditional on is gone
	// (the fenced transaction); see FencedError for which.
	ErrFenced = errors.New("owner: fenced")
)

// Ownership is one acquisition of a partition: what a fenced transaction
// is conditional on.
type Ownership struct {
	Partition string
	Node      string
	Epoch     uint64
	Lease     clientv3.LeaseID
	created   int64 // the owner key's create revision: this acquisition
}

// Manager acquires partitions for one node under its session.
type Manager struct {
	c      *clientv3.Client
	s      *concurrency.Session
	node   string
	prefix string
}

// New returns a Manager for node, whose ownerships live under s's lease,
// with keys under prefix.
func New(c *clientv3.Client, s *concurrency.Session, node, prefix string) *Manager {
	return &Manager{c: c, s: s, node: node, prefix: prefix}
}

func (m *Manager) ownerKey(p string) string { return m.prefix + "owner/" + p }
func (m *Manager) epochKey(p string) string { return m.prefix + "epoch/" + p }

// record is the owner key's value.
type record struct {
	Node  string `json:"node"`
	Epoch uint64 `json:"epoch"`
}

// Acquire makes this node partition's owner with a new epoch (one owner at a time, the rising fencing epoch), or
// returns ErrOwned naming the current owner. If this session already owns
// it, it returns that ownership unchanged.
func (m *Manager) Acquire(ctx context.Context, partition string) (Ownership, error) {
	ok, ek := m.ownerKey(partition), m.epochKey(partition)
	for {
		cur, err := m.c.Get(ctx, ek)
		if err != nil {
			return Ownership{}, fmt.Errorf("owner: acquire %s: %w", partition, err)
		}
		epoch, rev, err := parseEpoch(cur)
		if err != nil {
			return Ownership{}, err
		}
		next := epoch + 1
		val, _ := json.Marshal(record{Node: m.node, Epoch: next})
		resp, err := m.c.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(ok), "=", 0),
				clientv3.Compare(clientv3.ModRevision(ek), "=", rev)).
			Then(clientv3.OpPut(ok, string(val), clientv3.WithLease(m.s.Lease())),
				clientv3.OpPut(ek, strconv.FormatUint(next, 10))).
			Else(clientv3.OpGet(ok)).
			Commit()
		if err != nil {
			return Ownership{}, fmt.Errorf("owner: acquire %s: %w", partition, err)
		}
		if resp.Succeeded {
			return Ownership{Partition: partition, Node: m.node, Epoch: next, Lease: m.s.Lease(), created: resp.Header.Revision}, nil
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue // the epoch moved under us, and the owner is gone again: retry
		}
		var r record
		if err := json.Unmarshal(kvs[0].Value, &r); err != nil {
			return Ownership{}, fmt.Errorf("owner: %s: owner record: %w", partition, err)
		}
		if clientv3.LeaseID(kvs[0].Lease) == m.s.Lease() {
			return Ownership{Partition: partition, Node: r.Node, Epoch: r.Epoch, Lease: m.s.Lease(), created: kvs[0].CreateRevision}, nil
		}
		return Ownership{}, fmt.Errorf("%w: %s by %s at epoch %d", ErrOwned, partition, r.Node, r.Epoch)
	}
}

func parseEpoch(resp *clientv3.GetResponse) (epoch uint64, modRev int64, err error) {
	if len(resp.Kvs) == 0 {
		return 0, 0, nil
	}
	kv := resp.Kvs[0]
	epoch, err = strconv.ParseUint(string(kv.Value), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("owner: epoch %q: %w", kv.Value, err)
	}
	return epoch, kv.ModRevision, nil
}

// Release gives o up if it is still held; the epoch stays, and the next
// Acquire bumps it (the rising fencing epoch, ownership ending with the lease).
func (m *Manager) Release(ctx context.Context, o Ownership) error {
	k := m.ownerKey(o.Partition)
	_, err := m.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", o.created)).
		Then(clientv3.OpDelete(k)).
		Commit()
	if err != nil {
		return fmt.Errorf("owner: release %s: %w", o.Partition, err)
	}
	return nil
}

// Owner returns the partition's current owner and epoch; node "" if it
// has none (the epoch is then the last one's).
func (m *Manager) Owner(ctx context.Context, partition string) (node string, epoch uint64, err error) {
	resp, err := m.c.Txn(ctx).Then(clientv3.OpGet(m.ownerKey(partition)), clientv3.OpGet(m.epochKey(partition))).Commit()
	if err != nil {
		return "", 0, fmt.Errorf("owner: %s: %w", partition, err)
	}
	if epoch, _, err = parseEpoch((*clientv3.GetResponse)(resp.Responses[1].GetResponseRange())); err != nil {
		return "", 0, err
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		var r record
		if err := json.Unmarshal(kvs[0].Value, &r); err != nil {
			return "", 0, fmt.Errorf("owner: %s: owner record: %w", partition, err)
		}
		node = r.Node
	}
	return node, epoch, nil
}

// Record is an owner key's value as a watcher reads it.
type Record struct {
	Node  string
	Epoch uint64
}

// ParseRecord decodes an owner key's value.
func ParseRecord(value []byte) (Record, error) {
	var r record
	if err := json.Unmarshal(value, &r); err != nil {
		return Record{}, fmt.Errorf("owner: owner record: %w", err)
	}
	return Record{Node: r.Node, Epoch: r.Epoch}, nil
}

// OwnerPrefix is the prefix of every owner key: a watch on it sees every
// ownership change; the rest of a key is its partition.
func (m *Manager) OwnerPrefix() string { return m.prefix + "owner/" }

// Node is the node name this Manager acquires for.
func (m *Manager) Node() string { return m.node }
