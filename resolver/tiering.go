package resolver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// The object tier's pass (storage/tier): every
// remote.log.manager.task.interval.ms, sealed ledgers of topics with
// remote.storage.enable=true are uploaded and, once published, removed
// locally as local.retention.* allows; then objects of ledgers retention
// or deletion removed (T1-T6 apply to the whole log, its object part
// included) are deleted, orphans too.

const defaultTierInterval = 30 * time.Second

func (r *Resolver) startTiering() {
	if r.cfg.Tier == nil || r.cfg.TierInterval < 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.tiering.cancel, r.tiering.done = cancel, make(chan struct{})
	go func() {
		defer close(r.tiering.done)
		tick := time.NewTicker(r.cfg.TierInterval)
		defer tick.Stop()
		for {
			if err := r.RunTiering(ctx); err != nil && ctx.Err() == nil {
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

func (r *Resolver) stopTiering() {
	if r.tiering.cancel == nil {
		return
	}
	r.tiering.cancel()
	<-r.tiering.done
}

// RunTiering runs one pass of the object tier over every partition. The
// background loop calls it; tests call it directly.
func (r *Resolver) RunTiering(ctx context.Context) error {
	t := r.cfg.Tier
	if t == nil {
		return nil
	}
	r.tiering.mu.Lock()
	defer r.tiering.mu.Unlock()
	// Partitions are synced concurrently; the tier bounds how many
	// uploads run at once (remote.log.manager.copier.thread.pool.size).
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, p := range r.allPartitions() {
		_, s, err := p.ledgerAndSettings()
		if err != nil || !s.remote {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := t.Sync(ctx, p.log, s.local)
			if err != nil && !errors.Is(err, storage.ErrNoLog) && !errors.Is(err, storage.ErrRemoved) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s/%d: %w", p.topic, p.index, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	errs = append(errs, t.Reap(ctx))
	return errors.Join(errs...)
}
