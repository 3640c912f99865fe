package tier

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// LocalPolicy is a log's local retention (local.retention.ms and
// local.retention.bytes, already resolved: -2 became retention.*); -1 is
// no bound. Only published ledgers are ever removed locally (B4).
type LocalPolicy struct {
	RetentionMs, RetentionBytes int64
}

// Sync uploads log's sealed ledgers that have no published object yet,
// oldest first, and then removes local files local retention lets go:
// oldest first, each only once its object is published (B4). It stops at
// the first ledger it cannot upload, so the local part of a log stays a
// suffix of it.
func (t *Tier) Sync(ctx context.Context, log storage.LogID, p LocalPolicy) error {
	info, err := t.store.Info(log)
	if err != nil {
		return err
	}
	var local int64
	for _, li := range info.Ledgers {
		if !li.Offloaded {
			local += li.Bytes
		}
	}
	now := t.opts.Now()
	for i, li := range info.Ledgers {
		if i == len(info.Ledgers)-1 || !li.Sealed {
			return nil // never the open ledger
		}
		if li.Offloaded || li.Entries == 0 {
			continue
		}
		o, err := t.Upload(ctx, log, li.ID)
		if err != nil {
			return err
		}
		byTime := p.RetentionMs >= 0 && o.MaxTime < now.UnixMilli()-p.RetentionMs
		bySize := p.RetentionBytes >= 0 && local > p.RetentionBytes
		if !byTime && !bySize {
			continue // keep uploading; nothing later goes locally either
		}
		if i > 0 && !info.Ledgers[i-1].Offloaded && info.Ledgers[i-1].Entries > 0 {
			continue // the local part stays a suffix of the log
		}
		if err := t.store.Offload(log, li.ID); err != nil {
			return err
		}
		info.Ledgers[i].Offloaded = true
		local -= li.Bytes
		t.stats.offloads.Add(1)
	}
	return nil
}

// Reap deletes what nothing needs any more (B6, B8): upload attempts whose
// lease expired (their object is an orphan), objects of ledgers the log
// no longer holds (retention, DeleteRecords, DeleteTopics: first marked
// Deleting, then deleted once no live pin remains), expired pins, and
// objects under the prefix that no record names, once older than
// OrphanGrace.
func (t *Tier) Reap(ctx context.Context) error {
	objs, err := t.meta.List()
	if err != nil {
		return err
	}
	now := t.opts.Now()
	named := make(map[string]bool, len(objs))
	var errs []error
	for _, o := range objs {
		named[o.Key] = true
		if err := t.reapOne(ctx, o, now); err != nil && !errors.Is(err, ErrConflict) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, t.reapPins(now), t.reapOrphans(ctx, named, now))
	return errors.Join(errs...)
}

func (t *Tier) reapOne(ctx context.Context, o Object, now time.Time) error {
	switch o.State {
	case Uploading:
		if !t.abandoned(o, now) {
			return nil
		}
		if err := t.deleteObject(ctx, o.Key); err != nil {
			return err
		}
		t.stats.orphans.Add(1)
		return t.meta.Delete(o.Log, o.Ledger, o.Version)
	case Published:
		if t.live(o) {
			return nil
		}
		o.State = Deleting
		var err error
		if o, err = t.meta.Put(o); err != nil {
			return err
		}
	}
	// Deleting. The pins are read after the state change is stored, and a
	// reader pins before it revalidates: so either the reader saw
	// Deleting and did not read, or its pin is seen here (B6).
	pins, err := t.meta.Pins(o.Key)
	if err != nil {
		return err
	}
	for _, p := range pins {
		if p.Live(now) {
			return nil
		}
	}
	if err := t.deleteObject(ctx, o.Key); err != nil {
		return err
	}
	if err := t.meta.Delete(o.Log, o.Ledger, o.Version); err != nil {
		return err
	}
	t.stats.deletes.Add(1)
	t.log.Debug("tier-deleted", zap.String("key", o.Key))
	return nil
}

// live reports whether o's ledger is still one of its log's ledgers.
// Ledger ids are never reused, so a ledger gone is gone for good. Only a
// log known to be missing makes it dead; any other error keeps it.
func (t *Tier) live(o Object) bool {
	info, err := t.store.Info(o.Log)
	if errors.Is(err, storage.ErrNoLog) {
		return false
	}
	if err != nil {
		return true
	}
	for _, li := range info.Ledgers {
		if li.ID == o.Ledger {
			return true
		}
	}
	return false
}

func (t *Tier) reapPins(now time.Time) error {
	pins, err := t.meta.AllPins()
	if err != nil {
		return err
	}
	for _, p := range pins {
		if !p.Live(now) {
			if err := t.meta.RemovePin(p.Key, p.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// reapOrphans deletes objects under the prefix that no record names: an
// attempt whose record was removed before its object (a crash in
// abandon), or written by a process that lost its record. The grace
// period keeps an attempt that is recording itself right now (B8).
func (t *Tier) reapOrphans(ctx context.Context, named map[string]bool, now time.Time) error {
	var doomed []string
	err := t.retry(ctx, func(ctx context.Context) error {
		doomed = doomed[:0]
		return t.bucket.List(ctx, t.opts.Prefix, func(key string, _ int64, mod time.Time) error {
			if strings.HasSuffix(key, ".kgo") && !named[key] && now.Sub(mod) > t.opts.OrphanGrace {
				doomed = append(doomed, key)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, key := range doomed {
		if err := t.deleteObject(ctx, key); err != nil {
			return err
		}
		t.stats.orphans.Add(1)
	}
	return nil
}
