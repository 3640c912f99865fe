package retention

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// Retention and DeleteRecords: retention computes a trim boundary and
// feeds it to SoftTrim and HardTrim; it is not a storage primitive.
// The retention rules: resolver/doc.go "Retention".

// Retention is the retention pass of one resolver's partitions.
type Retention struct {
	store *storage.Store
	host  Host
	opts  Options
	log   *zap.Logger

	// mu serializes passes (the loop's and Run callers').
	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
}

// NewRetention returns the retention pass of host's partitions over
// store; Start starts its loop.
func NewRetention(store *storage.Store, host Host, opts Options) *Retention {
	return &Retention{store: store, host: host, opts: opts.withDefaults(), log: opts.withDefaults().Log}
}

// Start starts the background pass, every Options.CheckInterval
// (log.retention.check.interval.ms), unless the interval is negative.
func (r *Retention) Start() {
	if r.opts.CheckInterval < 0 {
		return
	}
	r.stop = make(chan struct{})
	r.done = make(chan struct{})
	go r.retentionLoop(r.opts.CheckInterval)
}

// Stop stops the background pass and waits for it.
func (r *Retention) Stop() {
	if r.stop == nil {
		return
	}
	close(r.stop)
	<-r.done
}

func (r *Retention) retentionLoop(every time.Duration) {
	defer close(r.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			if err := r.Run(r.opts.Now()); err != nil {
				r.log.Warn("retention-failed", zap.Error(err))
			}
		}
	}
}

// Run runs one retention pass over every partition as of now (the retention rules).
// The background loop calls it with the resolver's clock; tests call it
// directly with their own.
func (r *Retention) Run(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, p := range r.host.Partitions() {
		err := r.retainPartition(p, now)
		if err != nil && !errors.Is(err, r.opts.UnknownTopic) && !errors.Is(err, storage.ErrNoLog) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", p.Topic(), p.Index(), err))
		}
	}
	return errors.Join(errs...)
}

// retainPartition is one partition's pass.
func (r *Retention) retainPartition(p Partition, now time.Time) error {
	s, err := p.RetentionSettings()
	if err != nil {
		return err
	}
	if !s.Delete {
		// The cleanup policy: cleanup.policy=compact alone keeps data by key, not by age
		// or size; the log start still moves by DeleteRecords (ledgers below the log start).
		s.RetentionMs, s.RetentionBytes = -1, -1
	}
	info, err := r.store.Info(p.Log())
	if err != nil {
		return err
	}
	cut, allExpired, err := r.expiredBelow(p.Log(), info, s.RetentionMs, now)
	if err != nil {
		return err
	}
	if n := len(info.Ledgers); allExpired && n > 0 && info.Ledgers[n-1].Entries > 0 {
		// The expired open ledger: roll the expired open ledger so whole sealed ledgers only lets it go.
		if err := p.Roll(); err != nil {
			if errors.Is(err, ledger.ErrClosed) || errors.Is(err, ledger.ErrFenced) {
				return nil // reopened or fenced meanwhile: next pass
			}
			return err
		}
		if info, err = r.store.Info(p.Log()); err != nil {
			return err
		}
	}
	bound := max(sealedBelow(info.Ledgers, cut), sizeBound(info.Ledgers, s.RetentionBytes))
	return p.TrimTo(info, bound)
}

// expiredBelow returns the offset below which every entry is expired
// (time retention): the first entry whose running max timestamp is at or after
// now - retentionMs, or the end when there is none (allExpired).
func (r *Retention) expiredBelow(log storage.LogID, info storage.LogInfo, retentionMs int64, now time.Time) (cut Offset, allExpired bool, err error) {
	if retentionMs < 0 || info.Start >= info.End {
		return info.Start, false, nil
	}
	h, err := r.store.SeekTime(log, now.UnixMilli()-retentionMs)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return info.End, true, nil
	case err != nil:
		return 0, false, err
	}
	return min(h.Offset, info.End), false, nil
}

// sealedBelow is the largest ledger boundary at or below off that ends a
// sealed ledger (whole sealed ledgers only), 0 when there is none.
func sealedBelow(ls []storage.LedgerInfo, off Offset) Offset {
	var b Offset
	for i := 0; i+1 < len(ls) && ls[i].Sealed && ls[i+1].FirstOffset <= off; i++ {
		b = ls[i+1].FirstOffset
	}
	return b
}

// sizeBound is the boundary retention.bytes asks for (size retention), 0 for none.
func sizeBound(ls []storage.LedgerInfo, retentionBytes int64) Offset {
	if retentionBytes < 0 {
		return 0
	}
	var total int64
	for _, l := range ls {
		total += l.Bytes
	}
	var b Offset
	for i := 0; i+1 < len(ls) && ls[i].Sealed && total-ls[i].Bytes >= retentionBytes; i++ {
		total -= ls[i].Bytes
		b = ls[i+1].FirstOffset
	}
	return b
}
