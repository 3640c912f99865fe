package ledger

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// Managed is the managed ledger of one partition over one storage log.
//
// It holds no read state at all (R1): ReadEntries is a pure function of its
// arguments and one storage snapshot. The only mutable state is the
// append path's view of the open ledger, used for the roll policy, and the
// fenced/closed flag.
type Managed struct {
	store *storage.Store
	log   LogID
	// view is the log's compacted view, nil when it has none (view.go).
	view atomic.Pointer[compacted]
	// dispatch picks the reader of a ledger's candidate (read.go);
	// tier, nil without an object store, lists object candidates.
	dispatch ReadTargetDispatcher
	tier     *tier.Tier

	// state is stateActive, stateFenced or stateClosed. It is atomic so a
	// read never waits for the append lock.
	state atomic.Uint32

	// readRetries counts reads started again after a concurrent trim (for
	// tests and diagnostics; never consulted by a read, R1).
	readRetries atomic.Int64

	// mu serializes the append path: the roll decision and the storage
	// Write it precedes happen as one step. It is the only lock here.
	mu struct {
		sync.Mutex
		cfg  Config // the roll policy, defaults filled in
		open openLedger
	}
}

const (
	stateActive uint32 = iota
	stateFenced
	stateClosed
)

// openLedger is the append path's view of the open (last) ledger,
// including entries written but not yet durable (storage.Info counts only
// durable ones, and the roll policy must see pending bytes too).
type openLedger struct {
	id      LedgerID
	entries int64     // entries written into it, durable or not
	end     int64     // file bytes known to be used (lower bound)
	created time.Time // by Config.Now when we rolled it; storage's otherwise
}

// Open opens the managed ledger over log, creating the log if it is missing.
func Open(store *storage.Store, log LogID, cfg Config) (*Managed, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ErrInvalid)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Managed{store: store, log: log, tier: cfg.Tier}
	m.dispatch.local = &segments{store: store, log: log}
	if cfg.Tier != nil {
		m.dispatch.object = &objects{tier: cfg.Tier}
	}
	m.mu.cfg = cfg.withDefaults()
	info, err := store.Info(log)
	if errors.Is(err, storage.ErrNoLog) {
		if err = store.CreateLog(log); err != nil && !errors.Is(err, storage.ErrLogExists) {
			return nil, fmt.Errorf("ledger: create %v: %w", log, err)
		}
		info, err = store.Info(log)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: open %v: %w", log, err)
	}
	if info.State == storage.Fenced {
		m.state.Store(stateFenced)
	}
	m.mu.open = m.openLedgerOf(info)
	return m, nil
}

// openLedgerOf describes info's last ledger for the roll policy.
func (m *Managed) openLedgerOf(info storage.LogInfo) openLedger {
	if len(info.Ledgers) == 0 {
		return openLedger{}
	}
	li := info.Ledgers[len(info.Ledgers)-1]
	created := li.Created
	if created.IsZero() {
		created = m.mu.cfg.Now()
	}
	return openLedger{id: li.ID, entries: li.Entries, end: li.Bytes, created: created}
}

// Log is the storage log underneath.
func (m *Managed) Log() LogID { return m.log }

// Config is the effective configuration (defaults filled in).
func (m *Managed) Config() Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.cfg
}

// Reconfigure replaces the roll policy; the next append applies it. The
// ledger stays open, so reads in progress are not disturbed.
func (m *Managed) Reconfigure(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.cfg = cfg.withDefaults()
	return nil
}

// Snapshot is the log's Start and End now, as a read would see them.
func (m *Managed) Snapshot() (Snapshot, error) {
	b, err := m.store.Bounds(m.log)
	if err != nil {
		return Snapshot{}, m.storeReadErr(err)
	}
	return m.publishedStart(Snapshot{Start: b.Start, End: b.End}), nil
}

// Fence fences the ledger durably: appends and reads fail with ErrFenced
// (R11) until Activate.
func (m *Managed) Fence() error {
	if m.state.Load() == stateClosed {
		return ErrClosed
	}
	if err := m.store.Fence(m.log); err != nil {
		return fmt.Errorf("ledger: fence %v: %w", m.log, err)
	}
	m.state.CompareAndSwap(stateActive, stateFenced)
	return nil
}

// Activate undoes Fence.
func (m *Managed) Activate() error {
	if m.state.Load() == stateClosed {
		return ErrClosed
	}
	if err := m.store.Activate(m.log); err != nil {
		return fmt.Errorf("ledger: activate %v: %w", m.log, err)
	}
	m.state.CompareAndSwap(stateFenced, stateActive)
	return nil
}

// Close closes the managed ledger (not the store). Later appends fail with
// ErrClosed and later reads with ErrFenced and ErrClosed (R11). Idempotent.
func (m *Managed) Close() error {
	m.state.Store(stateClosed)
	return nil
}

// errFencedClosed is what a read of a closed ledger returns (R11).
var errFencedClosed = fmt.Errorf("%w: %w", ErrFenced, ErrClosed)

// readableErr is the R11 state check of the read path.
func (m *Managed) readableErr() error {
	switch m.state.Load() {
	case stateFenced:
		return ErrFenced
	case stateClosed:
		return errFencedClosed
	}
	return nil
}

// wrapStorageErr maps storage's fenced error onto ours, keeping both.
func wrapStorageErr(op string, log LogID, err error) error {
	if errors.Is(err, storage.ErrFenced) {
		return fmt.Errorf("%w: %s %v: %w", ErrFenced, op, log, err)
	}
	return fmt.Errorf("ledger: %s %v: %w", op, log, err)
}
