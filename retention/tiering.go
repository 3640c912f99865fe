package retention

import (
	"context"
	"errors"
	"fmt"
	"github.com/kgateway/kgateway/tier"
	"sync"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// The object tier's pass (tier): every
// remote.log.manager.task.interval.ms, sealed ledgers of topics with
// remote.storage.enable=true are uploaded and, once published, removed
// locally as local.retention.* allows; then objects of ledgers retention
// or deletion removed (the retention rules apply to the whole log, its object part
// included) are deleted, orphans too.

// Tiering is the object tier's pass over one resolver's partitions.
type Tiering struct {
	tier *tier.Tier
	host Host
	opts Options
	log  *zap.Logger

	// mu serializes passes (the loop's and Run callers').
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewTiering returns the tier pass of host's partitions into t (nil: no
// object tier, every pass does nothing); Start starts its loop.
func NewTiering(t *tier.Tier, host Host, opts Options) *Tiering {
	opts = opts.withDefaults()
	return &Tiering{tier: t, host: host, opts: opts, log: opts.Log}
}

// Start starts the background pass, every Options.TierInterval, when
// there is a tier and the interval is not negative.
func (r *Tiering) Start() {
	if r.tier == nil || r.opts.TierInterval < 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		tick := time.NewTicker(r.opts.TierInterval)
		defer tick.Stop()
		for {
			if err := r.Run(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("tiering-failed", zap.Error(err))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// Stop stops the background pass and waits for it.
func (r *Tiering) Stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
}

// Run runs one pass of the object tier over every partition. The
// background loop calls it; tests call it directly.
func (r *Tiering) Run(ctx context.Context) error {
	t := r.tier
	if t == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Partitions are synced concurrently; the tier bounds how many
	// uploads run at once (remote.log.manager.copier.thread.pool.size).
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, p := range r.host.Partitions() {
		s, err := p.RetentionSettings()
		if err != nil || !s.Remote {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := t.Sync(ctx, p.Log(), s.Local)
			if err != nil && !errors.Is(err, storage.ErrNoLog) && !errors.Is(err, storage.ErrRemoved) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s/%d: %w", p.Topic(), p.Index(), err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	errs = append(errs, t.Reap(ctx))
	return errors.Join(errs...)
}
