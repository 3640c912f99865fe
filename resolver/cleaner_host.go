package resolver

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kgateway/kgateway/cleaner"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// The log cleaner is package cleaner's; this file is what it sees of the
// resolver: the catalog (cleanerHost) and each partition (partRef),
// through cleaner's narrow Partition and Host interfaces.

// CleanerStats is what the cleaner has done since Open (metrics).
type CleanerStats = cleaner.Stats

// CleanerStats returns the cleaner's counters.
func (r *Resolver) CleanerStats() CleanerStats { return r.cleaner.Stats() }

// RunCleaner cleans, as of now, every compacted partition that is due
// (the cleanable range), pass after pass, until none is: the background threads' work,
// on demand (tests, tools). A partition whose pass fails is not taken
// again by this call.
func (r *Resolver) RunCleaner(now time.Time) error { return r.cleaner.Run(now) }

// newCleaner is the cleaner of r's partitions, configured by the
// broker's log.cleaner.* configs; Open starts it.
func newCleaner(r *Resolver) *cleaner.Cleaner {
	return cleaner.New(r.store, cleanerHost{r}, cleaner.Options{
		Threads:             r.cfg.Cleaner.Threads,
		BufferPerThread:     r.cfg.Cleaner.perThreadBuffer(),
		IOMaxBytesPerSecond: r.cfg.Cleaner.IOMaxBytesPerSecond,
		Backoff:             r.cfg.Cleaner.Backoff,
		UnknownTopic:        ErrUnknownTopic,
		Now:                 func() time.Time { return r.now() }, // read at each use, as the loop did
		Log:                 r.log,
	})
}

// cleanerHost is the catalog as the cleaner sees it.
type cleanerHost struct{ r *Resolver }

func (h cleanerHost) Partitions() []cleaner.Partition {
	return h.wrap(h.r.allPartitions())
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

func (h cleanerHost) SyncViews() error { return h.r.syncViews() }

func (h cleanerHost) ViewFailed(cp cleaner.Partition, err error) {
	h.r.logViewError(cp.(partRef).p, err)
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
	return p.mu.txn.lso(start, end)
}

// AbortedBefore is the partition's aborted transactions starting before
// end, the end of the range a pass may clean.
func (c partRef) AbortedBefore(end Offset) []cleaner.Aborted {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []cleaner.Aborted
	for _, a := range p.mu.txn.aborted {
		if a.first < end {
			out = append(out, cleaner.Aborted{PID: a.pid, First: a.first, Last: a.last})
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
		p.mu.txn.removeAborted(a.Last)
	}
	p.mu.Unlock()
	for _, a := range gone {
		p.app.txn.dirtyAborted[a.Last] = nil
	}
	p.app.Unlock()
	if err := r.states.checkpoint(p); err != nil {
		return err
	}
	p.app.Lock()
	defer p.app.Unlock()
	for _, a := range gone {
		if _, pending := p.app.txn.dirtyAborted[a.Last]; pending {
			return fmt.Errorf("%w: the aborted-transaction index entry of the marker at %d was not removed durably", ErrStorage, a.Last)
		}
	}
	return nil
}

// removeAborted drops the index entry of the ABORT marker at last.
func (v *txnView) removeAborted(last Offset) {
	i, found := slices.BinarySearchFunc(v.aborted, last, func(x abortedTxn, off Offset) int { return cmpOffset(x.last, off) })
	if found {
		v.aborted = slices.Delete(v.aborted, i, i+1)
	}
}
