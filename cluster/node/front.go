package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/storage"
)

var _ kafka.Cluster = (*Node)(nil)
var _ storage.Pipeliner = (*Node)(nil)

// Brokers are the registered nodes, in id order.
func (n *Node) Brokers() []kafka.Broker {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]kafka.Broker, 0, len(n.mu.brokers))
	for _, b := range n.mu.brokers {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b kafka.Broker) int { return int(a.NodeID) - int(b.NodeID) })
	return out
}

// Leader is the partition's owner, except that this node reports none
// for a partition it owns but does not serve (rebuild before serving).
func (n *Node) Leader(topic string, partition int32) (int32, int32, bool) {
	t, ok := n.p.Resolver.Topic(topic)
	if !ok {
		return -1, -1, false
	}
	return n.ownerOf(PKey(t.ID, partition))
}

// Coordinator is the owner of the coordinator role (the coordinator role).
func (n *Node) Coordinator() (int32, bool) {
	id, _, ok := n.ownerOf(CoordinatorKey)
	return id, ok
}

func (n *Node) ownerOf(pkey string) (int32, int32, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rec, ok := n.mu.owners[pkey]
	if !ok {
		return -1, -1, false
	}
	id, ok := nodeOf(rec.Node)
	if !ok {
		return -1, -1, false
	}
	if id == n.cfg.NodeID {
		h := n.mu.held[pkey]
		if h == nil || !h.serving || h.o.Epoch != rec.Epoch {
			return -1, -1, false
		}
	} else if _, live := n.mu.brokers[id]; !live {
		return -1, -1, false // its node is gone; its lease is about to end
	}
	return id, int32(rec.Epoch), true
}

// Serving is the ownership under which this node serves the partition
// now; ok is false when it does not (rebuild before serving, the transaction relay).
func (n *Node) Serving(topic string, partition int32) (owner.Ownership, bool) {
	t, ok := n.p.Resolver.Topic(topic)
	if !ok {
		return owner.Ownership{}, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	h := n.mu.held[PKey(t.ID, partition)]
	if h == nil || !h.serving {
		return owner.Ownership{}, false
	}
	return h.o, true
}

// VerifyTxn asks the transaction relay (the transaction relay, verification across nodes).
func (n *Node) VerifyTxn(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error) {
	if n.p.Txn == nil {
		return false, nil
	}
	return n.p.Txn.Verify(ctx, topic, partition, pid, epoch)
}

// AddTxnPartition asks the transaction relay (implicit adds across nodes).
func (n *Node) AddTxnPartition(ctx context.Context, id, topic string, partition int32, pid int64, epoch int16) (int16, error) {
	if n.p.Txn == nil {
		return 0, errors.New("cluster: no transaction relay")
	}
	return n.p.Txn.AddImplicitly(ctx, id, topic, partition, pid, epoch)
}

// Catalog is the shared catalog.
func (n *Node) Catalog() kafka.Catalog { return n.p.Catalog }

// replicateTimeout bounds one publication: past it, the outcome is
// unknown and nothing of it is acknowledged (replication under ownership).
const replicateTimeout = 30 * time.Second

// Replicate publishes a group commit (replication under ownership): one object, then each
// partition's range under its ownership.
func (n *Node) Replicate(entries []storage.Replicated) map[storage.LogID]error {
	return n.BeginReplicate(entries)()
}

// BeginReplicate begins publishing a group commit (replication under ownership, storage.Pipeliner): the
// object's PUT starts at once, while earlier group commits are still in
// flight, and its publication follows theirs (in-order publication). The
// function returned waits for the outcome.
func (n *Node) BeginReplicate(entries []storage.Replicated) func() map[storage.LogID]error {
	errs := map[storage.LogID]error{}
	owns := map[string]owner.Ownership{}
	logOf := map[string]*held{}
	batches := make([]diskless.Batch, 0, len(entries))
	n.mu.Lock()
	for _, e := range entries {
		h := n.mu.byLog[e.Log]
		if h == nil || !h.serving {
			errs[e.Log] = fmt.Errorf("%w: %v is not served here", storage.ErrNotLeader, e.Log)
			continue
		}
		owns[h.pkey], logOf[h.pkey] = h.o, h
		batches = append(batches, diskless.Batch{PKey: h.pkey, Base: int64(e.Header.Offset),
			Records: e.Header.Records, MaxTime: e.Header.MaxTime, Data: e.Payload})
	}
	n.mu.Unlock()
	if len(batches) == 0 {
		return func() map[storage.LogID]error { return errs }
	}
	ctx, cancel := context.WithTimeout(context.Background(), replicateTimeout)
	size := int64(0)
	for _, b := range batches {
		size += int64(len(b.Data))
	}
	n.upload.commits.Add(1)
	n.upload.bytes.Add(size)
	f := n.p.Diskless.Begin(ctx, batches, owns)
	return func() map[storage.LogID]error {
		defer cancel()
		res := f.Wait()
		n.upload.commits.Add(-1)
		n.upload.bytes.Add(-size)
		n.failed(res, logOf, errs)
		return errs
	}
}

// failed records the partitions of a group commit that were not
// published: their logs' errors in errs, and each is marked broken, to
// be released and rebuilt by the next round.
func (n *Node) failed(res map[string]error, logOf map[string]*held, errs map[storage.LogID]error) {
	for pkey, err := range res {
		if err == nil {
			continue
		}
		h := logOf[pkey]
		if errors.Is(err, owner.ErrFenced) {
			n.upload.fenced.Add(1)
			err = fmt.Errorf("%w: %w", storage.ErrNotLeader, err)
		}
		errs[h.log] = err
		n.mu.Lock()
		h.serving, h.broken = false, true // released and rebuilt by the next round
		n.mu.Unlock()
		n.Kick()
	}
}
