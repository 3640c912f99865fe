package resolver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/retention"
	"github.com/kgateway/kgateway/storage"
)

// Retention, tiering and DeleteRecords: the passes are package
// retention's; the resolver keeps the trim itself (it checkpoints the
// producer state first, transaction recovery, and prunes the aborted index) and
// DeleteRecords. The retention rules: retention/doc.go "Retention".

const defaultTierInterval = 30 * time.Second

// retentionHost is the catalog as the passes see it.
type retentionHost struct{ r *Resolver }

func (h retentionHost) Partitions() []retention.Partition {
	ps := h.r.mu.all()
	out := make([]retention.Partition, len(ps))
	for i, p := range ps {
		out[i] = partRef{h.r, p}
	}
	return out
}

func (c partRef) RetentionSettings() (retention.Settings, error) {
	_, s, err := c.p.ledgerAndSettings()
	if err != nil {
		return retention.Settings{}, err
	}
	return retention.Settings{Delete: s.Clean.Delete, RetentionMs: s.RetentionMs, RetentionBytes: s.RetentionBytes,
		Remote: s.Remote, Local: s.Local}, nil
}

// Roll seals the partition's open ledger (the expired open ledger).
func (c partRef) Roll() error {
	ml, _, err := c.p.ledgerAndSettings()
	if err != nil {
		return err
	}
	_, err = ml.Roll()
	return err
}

// TrimTo soft-trims to bound and hard-trims the whole ledgers below
// max(bound, log start) (ledgers below the log start, the log start
// before the files): the retention pass's trim, and DeleteRecords'.
func (c partRef) TrimTo(info storage.LogInfo, bound Offset) error {
	r, p := c.r, c.p
	if bound > info.Start {
		if err := r.states.checkpointBeforeTrim(p); err != nil {
			return err
		}
		if err := r.store.SoftTrim(p.log, bound); err != nil {
			return err
		}
	}
	hard := max(bound, info.Start)
	r.states.pruneAborted(p, hard)
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
// moves (transaction recovery): replay starts at the checkpoint or the log start, so a marker
// trimmed away before a checkpoint covered it would leave its transaction
// open after a restart, holding the LSO for good.
func (st *stateStore) checkpointBeforeTrim(p *partition) error {
	if err := st.checkpoint(p); err != nil {
		return fmt.Errorf("checkpoint before trim: %w", err)
	}
	return nil
}

// DeleteRecords moves the partition's log start offset up to offset
// (Kafka's DeleteRecords): records below it are no longer readable
// (OFFSET_OUT_OF_RANGE, the log start check), and the whole ledgers below it are removed
// now (ledgers below the log start). offset -1 means the high watermark. It returns the new log
// start (the low watermark). An offset past the high watermark, or below
// -1, is ErrOffsetOutOfRange; one at or below the current start changes
// nothing.
func (r *Resolver) DeleteRecords(topic string, partition int32, offset Offset) (Offset, error) {
	h, err := r.Resolve(topic, partition)
	if err != nil {
		return -1, err
	}
	if h.view != ledger.Committed {
		return -1, errReadOnly(topic) // Read-only companions
	}
	s, err := h.snapshot()
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
		if err := r.states.checkpointBeforeTrim(s.p); err != nil {
			return -1, err
		}
	}
	ml, _, err := s.p.ledgerAndSettings()
	if err != nil {
		return -1, err
	}
	// DeleteRecords below the local copy: a published log below the local one moves first, durably.
	if err := ml.TrimPublished(offset); err != nil {
		return -1, trimPublishedErr(err)
	}
	if err := r.store.SoftTrim(s.p.log, offset); err != nil {
		return -1, storageErr("soft trim", err)
	}
	info, err := r.store.Info(s.p.log)
	if err != nil {
		return -1, storageErr("log info", err)
	}
	if err := (partRef{r, s.p}).TrimTo(info, info.Start); err != nil {
		// The start moved (the request's effect); the files go next pass.
		r.log.Warn("delete-records-hard-trim-failed", zap.Stringer("log", s.p.log), zap.Error(err))
	}
	sn, err := ml.Snapshot()
	if err != nil {
		return -1, storageErr("log info", err)
	}
	return sn.Start, nil
}

// trimPublishedErr classifies a failed move of the published start (DeleteRecords below the local copy):
// a node that no longer owns the partition is ErrNotLeader, and one whose
// cluster kept changing under it until its deadline is a timeout
// (REQUEST_TIMED_OUT): both retriable, neither a storage fault.
func trimPublishedErr(err error) error {
	switch {
	case errors.Is(err, storage.ErrNotLeader):
		return fmt.Errorf("%w: trim the published log: %w", ErrNotLeader, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("resolver: trim the published log: %w", err)
	}
	return storageErr("trim the published log", err)
}
