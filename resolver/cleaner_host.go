package resolver

import (
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/cleaner"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"

	"go.uber.org/zap"
)

// The log cleaner is package cleaner's; this file is what it sees of the
// resolver: the catalog (cleanerHost) and each partition (partRef),
// through cleaner's narrow Partition and Host interfaces.

// cleanerHost is the catalog as the cleaner sees it.
type cleanerHost struct{ r *Resolver }

func (h cleanerHost) Partitions() []cleaner.Partition {
	return h.wrap(h.r.mu.all())
}

func (h cleanerHost) wrap(ps []*partition) []cleaner.Partition {
	out := make([]cleaner.Partition, len(ps))
	for i, p := range ps {
		out[i] = partRef{h.r, p}
	}
	return out
}

// ViewPartitions lists the partitions of the topics with a view on.
func (h cleanerHost) ViewPartitions() []cleaner.Partition {
	r := h.r
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*partition
	for _, t := range r.mu.topics {
		if topicconfig.ViewOn(t.configs) {
			out = append(out, t.parts...)
		}
	}
	return h.wrap(out)
}

// ViewStillOn reports that p's topic is bound with its view on.
func (h cleanerHost) ViewStillOn(cp cleaner.Partition) bool {
	r, p := h.r, cp.(partRef).p
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.mu.topics[p.topic]
	return ok && topicconfig.ViewOn(t.configs) && int(p.index) < len(t.parts) && t.parts[p.index] == p
}

func (h cleanerHost) SyncViews() error { return syncViews(h.r.store, &h.r.mu) }

// ViewFailed logs a failed view pass.
func (h cleanerHost) ViewFailed(cp cleaner.Partition, err error) {
	p := cp.(partRef).p
	h.r.log.Warn("compacted-view-pass-failed", zap.String("topic", p.topic), zap.Int32("partition", p.index), zap.Error(err))
}

// partRef is a partition as the cleaner and the retention passes see
// it. It is comparable:
// two values of the same partition are equal (the cleaner's busy set).
type partRef struct {
	r *Resolver
	p *partition
}

func (c partRef) Topic() string      { return c.p.topic }
func (c partRef) Index() int32       { return c.p.index }
func (c partRef) Log() storage.LogID { return c.p.log }

func (c partRef) CleanSettings() (cleaner.Settings, error) {
	_, s, err := c.p.ledgerAndSettings()
	if err != nil {
		return cleaner.Settings{}, err
	}
	return cleaner.Settings{
		Compact: s.Clean.Compact, MinDirtyRatio: s.Clean.MinDirtyRatio, MinLagMs: s.Clean.MinLagMs,
		MaxLagMs: s.Clean.MaxLagMs, DeleteRetentionMs: s.Clean.DeleteRetentionMs, MaxMessageBytes: s.MaxMessageBytes,
	}, nil
}

// LastStable is the partition's last stable offset under the bounds
// (the LSO): a pass cleans nothing at or past it (the LSO bound on cleaning).
func (c partRef) LastStable(start, end Offset) Offset {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.txn.LSO(start, end)
}

// AbortedBefore is the partition's aborted transactions starting before
// end, the end of the range a pass may clean.
func (c partRef) AbortedBefore(end Offset) []cleaner.Aborted {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []cleaner.Aborted
	for _, a := range p.mu.txn.Aborted {
		if a.First < end {
			out = append(out, cleaner.Aborted{PID: a.PID, First: a.First, Last: a.Last})
		}
	}
	return out
}

// OpenView creates the partition's view log if need be and has the
// partition's reads see it (the view log).
func (c partRef) OpenView() (storage.LogID, error) {
	ml, _, err := c.p.ledgerAndSettings()
	if err != nil {
		return 0, err
	}
	vlog := viewLogOf(c.p.log)
	if err := c.r.store.CreateLog(vlog); err != nil && !errors.Is(err, storage.ErrLogExists) {
		return 0, storageErr("create view", err)
	}
	ml.SetCompactedView(vlog, true)
	return vlog, nil
}

// ForgetAborted removes the index entries of the ABORT markers a pass
// drops (marker removal), from the read view and durably, before the pass's swap:
// once the marker is gone a listed entry would make a read_committed
// client drop its producer's later batches, while no batch of the
// transaction is left in either generation, so the entry is needed by
// neither. It fails when the removal is not durable; the pass is then
// dropped.
func (c partRef) ForgetAborted(gone []cleaner.Aborted) error {
	r, p := c.r, c.p
	if len(gone) == 0 {
		return nil
	}
	p.app.Lock()
	if p.app.txn == nil {
		p.app.Unlock()
		return fmt.Errorf("%w: partition not open", ErrStorage)
	}
	p.mu.Lock()
	for _, a := range gone {
		p.mu.txn.RemoveAborted(a.Last)
	}
	p.changes.Add(1)
	p.mu.Unlock()
	for _, a := range gone {
		p.app.txn.ForgetAborted(a.Last)
	}
	p.app.Unlock()
	if err := r.states.checkpoint(p); err != nil {
		return err
	}
	p.app.Lock()
	defer p.app.Unlock()
	for _, a := range gone {
		if p.app.txn.AbortedPending(a.Last) {
			return fmt.Errorf("%w: the aborted-transaction index entry of the marker at %d was not removed durably", ErrStorage, a.Last)
		}
	}
	return nil
}
