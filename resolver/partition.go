package resolver

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// partition is one topic-partition bound to one storage log.
//
// Lock order: ckptMu, then app, then mu.
//   - ckptMu serializes producer-state checkpoints with each other and with
//     topic deletion (so no checkpoint of a deleted log is written after
//     its keys are removed).
//   - app is held across the idempotence check and the ledger Write of a
//     produce, so sequence checks and offset assignment agree (D3, D4).
//     It is never held across a Wait.
//   - mu guards what readers need: the ledger, the settings, the waiters
//     and the durable max timestamp. It is held only briefly.
type partition struct {
	topic string
	index int32
	log   storage.LogID
	// id names the partition in its Versions; 0 when none covers its
	// reads (Partition.Version).
	id uint64

	ckptMu sync.Mutex

	app struct {
		sync.Mutex
		prod *producerSet
		// txn is the transaction state produce and markers check (KIP-890 partition verification, epoch fencing).
		txn *txnstate.Set
		// next is the offset after the last written entry (durable or not).
		next Offset
		// replayedFrom is where the replay at open began (exported producer state).
		replayedFrom Offset
		// maxTS is the max timestamp over written entries, for checkpoints.
		maxTS timestampMark
		// failed is set when an append's durability is in doubt (a Wait or a
		// later batch of a multi-batch write failed). Appends then fail
		// until the store is reopened, because the producer state may name
		// offsets that never became durable.
		failed error
		// last is the most recent Write; a checkpoint covering it waits on it.
		last *storage.Pending
		// unckpt counts entries and bytes written since the last checkpoint.
		unckpt      int
		unckptBytes int64
	}

	mu struct {
		sync.Mutex
		ml       *ledger.Managed
		settings topicconfig.Settings
		deleted  bool
		// replaced: ReplacePartition bound another log in this
		// partition's place; no produce through it is acknowledged from
		// then on (the old copy's retirement).
		replaced bool
		// waiters are woken by every durable append (waiter.go).
		waiters map[*Waiter]struct{}
		// maxTS is the max timestamp over durable entries (ListOffset -3).
		maxTS timestampMark
		// txn is what reads see of transactions: the LSO and the aborted
		// index (the read_committed bound, the LSO).
		txn txnstate.View
	}

	// logChanges and changes make the partition's Version: the log's
	// own changes (storage.Changes), and every change of what reads see
	// here (the transactions' view, deletion, replacement), counted
	// after it is made, under mu.
	logChanges storage.Changes
	changes    atomic.Uint64
}

// timestampMark is the largest batch max timestamp seen and the base
// offset of the first batch carrying it; Offset -1 when there is none.
type timestampMark struct {
	TS     int64
	Offset Offset
}

var noTimestamp = timestampMark{TS: -1, Offset: -1}

// observe folds one batch into the mark: a larger timestamp wins; on a tie
// the earlier offset wins (durable waits may complete out of order).
func (m *timestampMark) observe(ts int64, off Offset) {
	if m.Offset < 0 || ts > m.TS || (ts == m.TS && off < m.Offset) {
		*m = timestampMark{TS: ts, Offset: off}
	}
}

// openPartition opens the managed ledger over log (creating the log if it
// is missing) and recovers the partition's producer state.
func (st *stateStore) openPartition(name string, idx int32, log storage.LogID, s topicconfig.Settings) (*partition, error) {
	return st.openPartitionOver(name, idx, log, s, nil)
}

// openPartitionOver is openPartition for a log that is a cache of pub
// (the local copy as a cache): reads below the log's start go to pub, and the state is replayed
// from pub's start.
func (st *stateStore) openPartitionOver(name string, idx int32, log storage.LogID, s topicconfig.Settings, pub ledger.Published) (*partition, error) {
	ml, err := ledger.Open(st.store, log, s.Ledger)
	if err != nil {
		return nil, storageErr("open ledger", err)
	}
	if pub != nil {
		ml.SetPublished(pub)
	}
	changes, err := st.store.Changes(log)
	if err != nil {
		ml.Close()
		return nil, storageErr("open ledger", err)
	}
	p := &partition{topic: name, index: idx, log: log, logChanges: changes}
	if pub == nil {
		p.id = partitionIDs.Add(1) // a local copy's start is pub's: no Version covers it
	}
	p.mu.ml = ml
	p.mu.settings = s
	if err := st.recover(p); err != nil {
		ml.Close()
		return nil, err
	}
	return p, nil
}

// close marks the partition deleted, wakes its waiters and closes its
// ledger.
func (p *partition) close() error {
	p.app.Lock()
	defer p.app.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.deleted {
		return nil
	}
	p.mu.deleted = true
	p.changes.Add(1)
	p.wakeWaitersLocked()
	if err := p.mu.ml.Close(); err != nil && !errors.Is(err, ledger.ErrClosed) {
		return storageErr("close ledger", err)
	}
	return nil
}

// ledgerAndSettings returns what a produce needs, or ErrUnknownTopic when
// the partition was deleted.
func (p *partition) ledgerAndSettings() (*ledger.Managed, topicconfig.Settings, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.deleted {
		return nil, topicconfig.Settings{}, ErrUnknownTopic
	}
	return p.mu.ml, p.mu.settings, nil
}

// durableAppended records a durable batch and wakes the waiters (no cached EOF:
// nothing about the end is cached; waiters re-read it). It returns
// errReplaced when the partition was replaced meanwhile (the old copy's retirement).
func (p *partition) durableAppended(ts int64, off Offset) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.maxTS.observe(ts, off)
	if p.mu.replaced {
		return errReplaced
	}
	if !p.mu.deleted {
		p.wakeWaitersLocked()
	}
	return nil
}

// markReplaced records that another log is being bound in p's place
// (the old copy's retirement): a produce through p that has not answered yet fails from now on.
func (p *partition) markReplaced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.replaced = true
	p.changes.Add(1)
}

// writableLedger is the partition's managed ledger for an append, in
// one look under mu: ErrUnknownTopic once deleted, errReplaced once
// replaced (the old copy's retirement).
func (p *partition) writableLedger() (*ledger.Managed, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.deleted:
		return nil, ErrUnknownTopic
	case p.mu.replaced:
		return nil, errReplaced
	}
	return p.mu.ml, nil
}

// isReplaced reports markReplaced.
func (p *partition) isReplaced() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.replaced
}

// recover rebuilds the partition's producer state, transactions (transaction recovery) and
// max timestamp: the last checkpoint, then the batch headers of every
// durable entry at or after the offset it covers. Checkpoints are written every few entries
// (see checkpointEvery), so the replay is short; it closes the window
// between "data durable" and "producer state durable" (D4 across a crash).
func (st *stateStore) recover(p *partition) error {
	info, err := st.store.Info(p.log)
	if err != nil {
		return storageErr("log info", err)
	}
	ck, err := st.loadCheckpoint(p.log)
	if err != nil {
		return err
	}
	open, aborted, err := txnstate.Read(st.store, p.log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	lim, now := st.limits, st.now().UnixMilli()
	prod, txns := newProducerSet(), txnstate.NewSet()
	if ck.Covered > info.End {
		// Cannot happen unless durable data was lost; the state may name
		// offsets that do not exist, so rebuild it from the whole log (and
		// delete the persisted producers at the next checkpoint).
		st.log.Warn("producer-state-beyond-log-end", zap.Stringer("log", p.log),
			zap.Int64("covered", int64(ck.Covered)), zap.Int64("end", int64(info.End)))
		for id := range ck.producers {
			prod.dirty[id] = struct{}{}
		}
		txns.Discard(open, aborted)
		ck = checkpoint{producers: map[int64]*producer{}, maxTS: noTimestamp}
		open, aborted = nil, nil
	}
	// The local copy as a cache: a log that caches a published one starts where that one does;
	// the replay reads what is not local through the read flow (R20).
	logStart := info.Start
	if sn, err := p.mu.ml.Snapshot(); err == nil && sn.Start < logStart {
		logStart = sn.Start
	}
	prod.load(ck.producers, ck.legacy, lim, now)
	aborted = txnstate.Load(txns, open, aborted, logStart)
	from := max(ck.Covered, logStart)
	rs := replayState{ck: &ck, prod: prod, txns: txns, aborted: aborted}
	replayed, err := st.replay(p.mu.ml, from, info.End, &rs)
	if err != nil {
		// An unreadable entry fails this partition's appends (the producer
		// state is incomplete) but not the whole Open: reads still serve
		// what is valid and fail closed on the rest.
		st.log.Error("producer-state-replay-failed", zap.Stringer("log", p.log), zap.Error(err))
		p.app.failed = err
		replayed = 0
	}
	p.app.prod = prod
	p.app.txn = txns
	p.app.next = info.End
	p.app.replayedFrom = from
	p.app.maxTS = ck.maxTS
	p.mu.maxTS = ck.maxTS
	p.mu.txn = txnstate.ViewOf(txns, rs.aborted)
	if p.app.failed == nil && (replayed > 0 || len(prod.dirty) > 0 || txns.Dirty()) {
		return st.checkpoint(p)
	}
	return nil
}

// replayState is what a replay rebuilds: the checkpoint's max timestamp
// and Covered, the producers, the transactions and the aborted index.
type replayState struct {
	ck      *checkpoint
	prod    *producerSet
	txns    *txnstate.Set
	aborted []txnstate.Aborted
}

// replay folds the batch headers of the durable entries in [from, end)
// into rs (transaction recovery): idempotent batches into the producers, transactional ones
// into the open transactions, markers end them (an ABORT adds to the
// aborted index). It returns how many entries it read.
// It reads through the managed ledger's read flow, so the entries of
// ledgers offloaded to the object tier are read from their objects.
func (st *stateStore) replay(ml *ledger.Managed, from, end Offset, rs *replayState) (int, error) {
	lim := st.limits
	ck, prod := rs.ck, rs.prod
	log := ml.Log()
	const maxEntries, maxBytes = 1 << 16, 4 << 20
	n := 0
	for from < end {
		sn, entries, err := ml.ReadEntries(ledger.Committed, from, end-1, maxEntries, maxBytes, nil)
		if err == nil && from < sn.Start {
			err = fmt.Errorf("%w: %v below the log start %v", storage.ErrTrimmed, from, sn.Start)
		}
		if err != nil {
			return n, storageErr(fmt.Sprintf("replay %s from %s", log, from), err)
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			if e.End() <= from {
				continue
			}
			from = e.End()
			n++
			if len(e.Payload) < batchHeaderLen {
				st.log.Warn("replay-short-entry", zap.Stringer("log", log), zap.Int64("offset", int64(e.Offset)))
				continue
			}
			h := decodeHeader(e.Payload)
			ck.maxTS.observe(e.MaxTime, e.Offset)
			switch {
			case h.Control():
				m, err := recordbatch.DecodeMarker(e.Payload)
				if err != nil {
					return n, storageErr(fmt.Sprintf("replay %s marker at %s", log, e.Offset), err)
				}
				if _, a := rs.txns.End(h.ProducerID, e.Offset, m.Commit); a != nil {
					rs.aborted = append(rs.aborted, *a)
				}
				prod.fence(h.ProducerID, h.ProducerEpoch, m.CoordinatorEpoch, st.now().UnixMilli(), lim)
			case h.Idempotent():
				prod.record(h, e.Offset, st.now().UnixMilli(), nil, lim)
				if h.Transactional() {
					rs.txns.Begin(h.ProducerID, h.ProducerEpoch, e.Offset)
				}
			}
		}
	}
	ck.Covered = max(ck.Covered, from)
	return n, nil
}

// applySettings installs new topic settings. A changed rollover policy
// reconfigures the ledger in place under app (no Write in flight), so
// reads in progress go on undisturbed and the next append applies it.
func (p *partition) applySettings(s topicconfig.Settings) error {
	p.app.Lock()
	defer p.app.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.deleted {
		return nil
	}
	old := p.mu.settings.Ledger
	p.mu.settings = s
	p.changes.Add(1)
	if old.SegmentBytes == s.Ledger.SegmentBytes && old.SegmentAge == s.Ledger.SegmentAge {
		return nil
	}
	if err := p.mu.ml.Reconfigure(s.Ledger); err != nil {
		return storageErr("reconfigure ledger", err)
	}
	return nil
}
