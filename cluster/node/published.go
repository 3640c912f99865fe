package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/cluster/diskless"
	"github.com/kgateway/kgateway/cluster/owner"
	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
)

// published is a held partition's published log, as the ledger reads it
// below its local copy (pinned reads below the cache, ledger R20, R21).
type published struct {
	n *Node
	h *held
}

var _ ledger.Published = published{}

// Start is the published start this node knows: read at the rebuild
// and moved by this node's own SetStart (the owner is the start's only
// writer, fenced writers publish nothing).
func (p published) Start() (ledger.Offset, bool) {
	p.n.mu.Lock()
	defer p.n.mu.Unlock()
	return ledger.Offset(p.h.pubStart), true
}

func (p published) Candidates(ctx context.Context, from, to ledger.Offset) ([]ledger.PublishedRange, error) {
	_, _, ranges, err := p.n.p.Diskless.Log(ctx, p.h.pkey)
	if err != nil {
		return nil, err
	}
	var out []ledger.PublishedRange
	for _, whole := range ranges {
		// A merged range in its pieces (merged ranges in pieces): a read fetches
		// only those it needs.
		for _, r := range whole.Parts() {
			if r.End <= int64(from) || r.Base >= int64(to) {
				continue
			}
			out = append(out, ledger.PublishedRange{Base: ledger.Offset(r.Base), End: ledger.Offset(r.End),
				Object: r.Object, Pos: r.Pos, Len: r.Len, SHA256: r.SHA256, Version: r.Rev, MaxTime: r.MaxTime,
				Record: r.Record})
		}
	}
	return out, nil
}

// Trim publishes a new start under the ownership (DeleteRecords below
// the local copy, DeleteRecords below the local copy), then reads start from it. A conflict with
// this node's own upkeep (a merge of the same ranges) is retried
// (retryTransient): it is no storage fault and never reaches the client
// as one.
func (p published) Trim(ctx context.Context, start ledger.Offset) error {
	err := retryTransient(ctx, trimBudget, func(ctx context.Context) error {
		p.n.mu.Lock()
		o := p.h.o
		p.n.mu.Unlock()
		return p.n.p.Diskless.SetStart(ctx, o, p.h.pkey, int64(start))
	})
	if err != nil {
		return err
	}
	p.n.mu.Lock()
	p.h.pubStart = max(p.h.pubStart, int64(start))
	p.n.mu.Unlock()
	return nil
}

// trimBudget bounds how long Trim retries transient conflicts.
const trimBudget = 10 * time.Second

// retryTransient runs op until it succeeds, fails for good, or budget
// has passed, waiting a little longer after each transient failure:
// diskless.ErrConflict (the records changed under op too often) and
// ErrStale (its view was compacted away) say that someone else made
// progress meanwhile, and a new try reads the new records. A lost
// ownership is storage.ErrNotLeader (the client looks for the new
// owner); transient failures past the budget wrap
// context.DeadlineExceeded (a timeout the client retries), never a
// storage fault.
func retryTransient(ctx context.Context, budget time.Duration, op func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	wait := 5 * time.Millisecond
	for {
		err := op(ctx)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, owner.ErrFenced):
			return fmt.Errorf("%w: %w", storage.ErrNotLeader, err)
		case !errors.Is(err, diskless.ErrConflict) && !errors.Is(err, diskless.ErrStale) && ctx.Err() == nil:
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// Read reads rs, the ranges not in the node's range cache (the range cache) under
// the node's reader floor (floored reads, cluster/diskless): the ranges are
// revalidated in a read-only transaction (pin revalidation) and the read
// is covered by the node's one floor record under its session lease,
// with no record written per read; where the floor cannot cover it, under
// pins attached to that lease (pinned objects kept). A node that dies
// leaves neither beyond the lease.
func (p published) Read(ctx context.Context, rs []ledger.PublishedRange) ([][]byte, error) {
	out := make([][]byte, len(rs))
	var miss []diskless.Range
	var at []int
	for i, r := range rs {
		if data, ok := p.n.ranges.get(keyOf(r)); ok {
			out[i] = data
			continue
		}
		miss = append(miss, diskless.Range{PKey: p.h.pkey, Base: int64(r.Base), End: int64(r.End),
			Object: r.Object, Pos: r.Pos, Len: r.Len, SHA256: r.SHA256, Rev: r.Version, Record: r.Record})
		at = append(at, i)
	}
	if len(miss) == 0 {
		return out, nil
	}
	p.n.mu.Lock()
	lease := p.n.mu.sess.Lease()
	p.n.mu.Unlock()
	data, err := p.n.p.Diskless.ReadFloored(ctx, lease, miss...)
	if err != nil {
		return nil, staleAsLedger(err)
	}
	for j, i := range at {
		out[i] = data[j]
		p.n.ranges.put(keyOf(rs[i]), data[j])
	}
	return out, nil
}

func keyOf(r ledger.PublishedRange) rangeKey {
	return rangeKey{object: r.Object, pos: r.Pos, len: r.Len, sha256: r.SHA256}
}

// staleAsLedger maps a stale range to the ledger's retry (R21).
func staleAsLedger(err error) error {
	if err != nil && errors.Is(err, diskless.ErrStale) {
		return fmt.Errorf("%w: %w", ledger.ErrStale, err)
	}
	return err
}
