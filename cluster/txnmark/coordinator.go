package txnmark

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kgateway/kgateway/cluster/owner"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The coordinator side: the relay as kafka/txn's Partitions (but for
// producer ids, which the resolver hands out).

// SetCoordinator makes o, a coordinator ownership, the one every record
// is written under (coordinator-fenced records); the node calls it before the coordinator it
// restored serves anything.
func (r *Relay) SetCoordinator(o owner.Ownership) {
	g := r.owners().Guard(o)
	r.coord.Store(&g)
	r.adds.mu.Lock()
	for _, e := range r.adds.reqs {
		e.done = false // refused under the former ownership: answer now
	}
	r.adds.mu.Unlock()
	r.wakeAdds()
}

// AddTxnPartition registers the partition in producer pid's transaction
// at epoch: its leader, whichever node that is now or later, accepts the
// transaction's batches (leader-applied records, verification across nodes).
func (r *Relay) AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	_, err := r.put(r.key(topic, partition, pid), record{Epoch: epoch})
	return err
}

// WriteTxnMarker decides the transaction on the partition and returns
// once its marker is durable: WriteTxnMarkers of that one partition.
func (r *Relay) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, _ int32) error {
	return r.WriteTxnMarkers(pid, epoch, commit, []Partition{{Topic: topic, Partition: partition}})[0]
}

// forget deletes a record under the coordinator ownership: for a
// partition that no longer exists.
func (r *Relay) forget(key string) error {
	g := r.coord.Load()
	if g == nil {
		return ErrNotCoordinator
	}
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Txn(ctx).If(*g...).Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: %w", ErrNotCoordinator, owner.ErrFenced)
	}
	return nil
}

// put writes rec at key under the coordinator ownership and returns the
// revision it was written at.
func (r *Relay) put(key string, rec record) (int64, error) {
	g := r.coord.Load()
	if g == nil {
		return 0, ErrNotCoordinator
	}
	v, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	ctx, cancel := r.ctx()
	defer cancel()
	resp, err := r.cli.Txn(ctx).If(*g...).Then(clientv3.OpPut(key, string(v))).Commit()
	if err != nil {
		return 0, fmt.Errorf("txnmark: write %s: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("%w: %w", ErrNotCoordinator, owner.ErrFenced)
	}
	return resp.Header.Revision, nil
}

// waitGone returns once key, written at rev, is deleted, as the relay's
// own watch sees it. One watch of the whole prefix serves every wait: a
// watch created per marker from a past revision would start unsynced,
// and etcd catches those up only every 100 ms.
func (r *Relay) waitGone(ctx context.Context, key string, rev int64) error {
	w := &waiter{key: strings.TrimPrefix(key, r.dir), rev: rev, gone: make(chan struct{})}
	r.mu.Lock()
	r.mu.waiters[w] = struct{}{}
	r.wakeLocked()
	r.mu.Unlock()
	select {
	case <-w.gone:
		return nil
	case <-ctx.Done():
		r.mu.Lock()
		delete(r.mu.waiters, w)
		r.mu.Unlock()
		return ctx.Err()
	}
}
