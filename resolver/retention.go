package resolver

import (
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// Retention and DeleteRecords: retention computes a trim boundary and
// feeds it to SoftTrim and HardTrim; it is not a storage primitive.
// Invariants T1–T6: doc.go "Retention".

// startRetention starts the background pass, every
// log.retention.check.interval.ms, unless the interval is negative.
func (r *Resolver) startRetention() {
	if r.cfg.RetentionCheckInterval < 0 {
		return
	}
	r.retention.stop = make(chan struct{})
	r.retention.done = make(chan struct{})
	go r.retentionLoop(r.cfg.RetentionCheckInterval)
}

// stopRetention stops the background pass and waits for it.
func (r *Resolver) stopRetention() {
	if r.retention.stop == nil {
		return
	}
	close(r.retention.stop)
	<-r.retention.done
}

func (r *Resolver) retentionLoop(every time.Duration) {
	defer close(r.retention.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-r.retention.stop:
			return
		case <-tick.C:
			if err := r.RunRetention(r.now()); err != nil {
				r.log.Warn("retention-failed", zap.Error(err))
			}
		}
	}
}

// RunRetention runs one retention pass over every partition as of now
// (T1–T6). The background loop calls it with the resolver's clock; tests
// call it directly with their own.
func (r *Resolver) RunRetention(now time.Time) error {
	r.retention.mu.Lock()
	defer r.retention.mu.Unlock()
	var errs []error
	for _, p := range r.allPartitions() {
		err := r.retainPartition(p, now)
		if err != nil && !errors.Is(err, ErrUnknownTopic) && !errors.Is(err, storage.ErrNoLog) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", p.topic, p.index, err))
		}
	}
	return errors.Join(errs...)
}

// allPartitions lists every partition of every topic (none once closed).
func (r *Resolver) allPartitions() []*partition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.mu.closed {
		return nil
	}
	var out []*partition
	for _, t := range r.mu.topics {
		out = append(out, t.parts...)
	}
	return out
}

// retainPartition is one partition's pass.
func (r *Resolver) retainPartition(p *partition, now time.Time) error {
	ml, s, err := p.ledgerAndSettings()
	if err != nil {
		return err
	}
	if !s.clean.delete {
		// L5: cleanup.policy=compact alone keeps data by key, not by age
		// or size; the log start still moves by DeleteRecords (T5).
		s.retentionMs, s.retentionBytes = -1, -1
	}
	info, err := r.store.Info(p.log)
	if err != nil {
		return err
	}
	cut, allExpired, err := r.expiredBelow(p.log, info, s.retentionMs, now)
	if err != nil {
		return err
	}
	if n := len(info.Ledgers); allExpired && n > 0 && info.Ledgers[n-1].Entries > 0 {
		// T4: roll the expired open ledger so T1 lets it go.
		if _, err := ml.Roll(); err != nil {
			if errors.Is(err, ledger.ErrClosed) || errors.Is(err, ledger.ErrFenced) {
				return nil // reopened or fenced meanwhile: next pass
			}
			return err
		}
		if info, err = r.store.Info(p.log); err != nil {
			return err
		}
	}
	bound := max(sealedBelow(info.Ledgers, cut), sizeBound(info.Ledgers, s.retentionBytes))
	return r.trimTo(p, info, bound)
}

// expiredBelow returns the offset below which every entry is expired
// (T2): the first entry whose running max timestamp is at or after
// now - retentionMs, or the end when there is none (allExpired).
func (r *Resolver) expiredBelow(log storage.LogID, info storage.LogInfo, retentionMs int64, now time.Time) (cut Offset, allExpired bool, err error) {
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
// sealed ledger (T1), 0 when there is none.
func sealedBelow(ls []storage.LedgerInfo, off Offset) Offset {
	var b Offset
	for i := 0; i+1 < len(ls) && ls[i].Sealed && ls[i+1].FirstOffset <= off; i++ {
		b = ls[i+1].FirstOffset
	}
	return b
}

// sizeBound is the boundary retention.bytes asks for (T3), 0 for none.
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

// trimTo soft-trims to bound and hard-trims the whole ledgers below
// max(bound, log start) (T5, T6).
func (r *Resolver) trimTo(p *partition, info storage.LogInfo, bound Offset) error {
	if bound > info.Start {
		if err := r.checkpointBeforeTrim(p); err != nil {
			return err
		}
		if err := r.store.SoftTrim(p.log, bound); err != nil {
			return err
		}
	}
	hard := max(bound, info.Start)
	r.pruneAborted(p, hard)
	gone := 0
	for i := 0; i+1 < len(info.Ledgers) && info.Ledgers[i].Sealed && info.Ledgers[i+1].FirstOffset <= hard; i++ {
		gone++
	}
	if gone == 0 {
		return nil
	}
	if err := r.store.HardTrim(p.log, hard); err != nil {
		return err
	}
	r.log.Info("retention-trimmed", zap.String("topic", p.topic), zap.Int32("partition", p.index),
		zap.Int64("log-start", int64(hard)), zap.Int("ledgers-removed", gone))
	return nil
}

// checkpointBeforeTrim checkpoints the partition before its log start
// moves (X7): replay starts at the checkpoint or the log start, so a marker
// trimmed away before a checkpoint covered it would leave its transaction
// open after a restart, holding the LSO for good.
func (r *Resolver) checkpointBeforeTrim(p *partition) error {
	if err := r.checkpoint(p); err != nil {
		return fmt.Errorf("checkpoint before trim: %w", err)
	}
	return nil
}

// DeleteRecords moves the partition's log start offset up to offset
// (Kafka's DeleteRecords): records below it are no longer readable
// (OFFSET_OUT_OF_RANGE, S1), and the whole ledgers below it are removed
// now (T5). offset -1 means the high watermark. It returns the new log
// start (the low watermark). An offset past the high watermark, or below
// -1, is ErrOffsetOutOfRange; one at or below the current start changes
// nothing.
func (r *Resolver) DeleteRecords(topic string, partition int32, offset Offset) (Offset, error) {
	s, err := r.takeSnapshot(topic, partition)
	if err != nil {
		return -1, err
	}
	if offset == -1 {
		offset = s.info.End
	}
	if offset < 0 || offset > s.info.End {
		return -1, fmt.Errorf("%w: delete records below %d: high watermark is %d", ErrOffsetOutOfRange, offset, s.info.End)
	}
	if offset > s.info.Start {
		if err := r.checkpointBeforeTrim(s.p); err != nil {
			return -1, err
		}
	}
	ml, _, err := s.p.ledgerAndSettings()
	if err != nil {
		return -1, err
	}
	// N9: a published log below the local one moves first, durably.
	if err := ml.TrimPublished(offset); err != nil {
		return -1, storageErr("trim the published log", err)
	}
	if err := r.store.SoftTrim(s.p.log, offset); err != nil {
		return -1, storageErr("soft trim", err)
	}
	info, err := r.store.Info(s.p.log)
	if err != nil {
		return -1, storageErr("log info", err)
	}
	if err := r.trimTo(s.p, info, info.Start); err != nil {
		// The start moved (the request's effect); the files go next pass.
		r.log.Warn("delete-records-hard-trim-failed", zap.Stringer("log", s.p.log), zap.Error(err))
	}
	sn, err := ml.Snapshot()
	if err != nil {
		return -1, storageErr("log info", err)
	}
	return sn.Start, nil
}
