package cleaner

import (
	"errors"
	"fmt"
	"github.com/kgateway/kgateway/recordbatch"
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// cleanPlan is one partition's state as the cleaner sees it (the cleanable range).
type cleanPlan struct {
	p Partition
	// log is the log the pass cleans: the partition's, or its compacted
	// view's (view, the view log).
	log     storage.LogID
	view    bool
	compact bool
	s       Settings
	info    storage.LogInfo
	// Ledgers [0, dirty) are the cleaned prefix, [dirty, end) the dirty
	// cleanable ones; end and after are not cleanable (the open ledger,
	// or too new for min.compaction.lag.ms).
	dirty, end int
	ratio      float64
	dirtyBytes int64
	lagMs      int64 // age of the first dirty entry
	firstDirty Offset
	horizon    bool // a kept tombstone's delete horizon has passed
}

// due is the cleanable range's condition for a pass.
func (c cleanPlan) due() bool {
	if c.end == 0 {
		return false
	}
	dirty := c.dirtyBytes > 0 && (c.ratio >= c.s.MinDirtyRatio || c.overdue())
	return dirty || c.horizon
}

func (c cleanPlan) overdue() bool { return c.dirtyBytes > 0 && c.lagMs > c.s.MaxLagMs }

// before orders plans: overdue first, then the dirtiest.
func (c cleanPlan) before(o cleanPlan) bool {
	if c.overdue() != o.overdue() {
		return c.overdue()
	}
	return c.ratio > o.ratio
}

// planClean computes a partition's plan as of now.
func (r *Cleaner) planClean(p Partition, now time.Time) (cleanPlan, error) {
	s, err := p.CleanSettings()
	if err != nil || !s.Compact {
		return cleanPlan{}, err
	}
	info, err := r.store.Info(p.Log())
	if err != nil {
		return cleanPlan{}, err
	}
	c := cleanPlan{p: p, log: p.Log(), compact: true, s: s, info: info}
	if c.end, err = r.stableEnd(p, info, s, now); err != nil {
		return cleanPlan{}, err
	}
	if c.end > 0 && info.Ledgers[0].Gen > 0 {
		c.dirty = 1
	}
	c.measure()
	if c.dirtyBytes > 0 {
		if h, err := r.store.Floor(p.Log(), c.firstDirty); err == nil {
			c.lagMs = now.UnixMilli() - h.MaxTime
		}
	}
	if hz := r.horizonOf(c.log); hz >= 0 && now.UnixMilli() >= hz {
		c.horizon = true
	}
	return c, nil
}

// stableEnd is the index of the first ledger of p's log, described by
// info, that a pass may not clean or copy: the open one, or the first
// holding an entry newer than now - min.compaction.lag.ms (the cleanable range) or at or
// past the last stable offset (the LSO bound on cleaning).
func (r *Cleaner) stableEnd(p Partition, info storage.LogInfo, s Settings, now time.Time) (int, error) {
	end := len(info.Ledgers) - 1
	if s.MinLagMs > 0 {
		// The cleanable range: the first entry whose running max is newer than the lag
		// ends what is cleanable, with its ledger.
		h, err := r.store.SeekTime(p.Log(), now.UnixMilli()-s.MinLagMs+1)
		if err == nil {
			for end > 0 && info.Ledgers[end].FirstOffset > h.Offset {
				end--
			}
		} else if !errors.Is(err, storage.ErrNotFound) {
			return 0, err
		}
	}
	// The LSO bound on cleaning: nothing at or past the last stable offset is cleaned, so
	// every transaction with a batch in the range has ended.
	lso := p.LastStable(info.Start, info.End)
	for end > 0 && info.Ledgers[end].FirstOffset > lso {
		end--
	}
	return end, nil
}

// measure sets the plan's dirty bytes, ratio and lag from its ledgers.
func (c *cleanPlan) measure() {
	info := c.info
	var clean int64
	for i, l := range info.Ledgers[:max(c.end, 0)] {
		if i < c.dirty {
			clean += l.Bytes
		} else {
			c.dirtyBytes += l.Bytes
		}
	}
	if c.dirtyBytes > 0 {
		c.ratio = float64(c.dirtyBytes) / float64(clean+c.dirtyBytes)
		c.firstDirty = max(info.Ledgers[c.dirty].FirstOffset, info.Start)
	}
}

// errCleanerStopped ends a pass the resolver's Close interrupted.
var errCleanerStopped = errors.New("resolver: cleaner stopped")

// ErrMapTooSmall: the first dirty ledger has more keys than the map.
var ErrMapTooSmall = errors.New("resolver: the dedupe buffer cannot hold the keys of one ledger; raise log.cleaner.dedupe.buffer.size or lower log.cleaner.threads")

// cleanPartition is one pass (the dedupe budget, the latest-record rewrite, the tombstone horizon, compacted generations).
func (r *Cleaner) cleanPartition(c cleanPlan, m *offsetMap, now time.Time) error {
	s, err := c.p.CleanSettings()
	if err != nil {
		return err
	}
	f := &batchFilter{
		m: m, nowMs: now.UnixMilli(), deleteRetentionMs: c.s.DeleteRetentionMs,
		limit: recordbatch.DecompressedLimit(s.MaxMessageBytes), lastOfProducer: map[int64]Offset{}, minHorizon: -1,
		txn: newTxnFilter(c.p.AbortedBefore(c.info.Ledgers[c.end].FirstOffset)),
	}
	if c.view {
		f.txn = emptyTxnFilter() // The view log: a view holds no marker and no aborted batch
	}
	upTo, err := r.buildMap(c, f)
	if err != nil {
		return err
	}
	if upTo == 0 {
		return nil
	}
	ids := make([]storage.LedgerID, upTo)
	for i := range ids {
		ids[i] = c.info.Ledgers[i].ID
	}
	w, err := r.store.BeginRewrite(c.log, ids)
	if err != nil {
		return err
	}
	read, err := r.rewriteRange(c, f, w)
	if err == nil && !c.view {
		err = c.p.ForgetAborted(f.txn.dropped) // Marker removal: before the swap
	}
	if err == nil {
		err = w.Commit()
	}
	if err != nil {
		w.Abort()
		return err
	}
	r.setHorizon(c.log, f.minHorizon)
	if read > 0 {
		r.stats.recopy.Store(floatBits(float64(w.Bytes()) / float64(read)))
	}
	r.log.Info("cleaner-pass", zap.String("topic", c.p.Topic()), zap.Int32("partition", c.p.Index()), zap.Bool("view", c.view),
		zap.Int("ledgers", upTo), zap.Int64("bytes-read", read), zap.Int64("bytes-written", w.Bytes()),
		zap.Int("keys", m.used), zap.Float64("dirty-ratio", c.ratio))
	return nil
}

// buildMap reads the range from the first ledger: the cleaned prefix for
// its producers only, the dirty ledgers for their keys too (the dedupe budget), until
// the map is full. It returns how many ledgers the pass rewrites.
func (r *Cleaner) buildMap(c cleanPlan, f *batchFilter) (int, error) {
	ls := c.info.Ledgers
	// At most one key per dirty offset.
	f.m.reset(int64(ls[c.end].FirstOffset - ls[min(c.dirty, c.end)].FirstOffset))
	for i := 0; i < c.end; i++ {
		mapKeys := i >= c.dirty
		full := false
		err := r.eachBatch(c, ls[i].FirstOffset, ls[i+1].FirstOffset, func(e storage.Entry) error {
			h := recordbatch.DecodeHeader(e.Payload)
			if h.Idempotent() {
				f.lastOfProducer[h.ProducerID] = h.BaseOffset
			}
			if !mapKeys || full || h.Control() || f.txn.abortedBatch(h) {
				return nil
			}
			return eachRecord(e.Payload, f.limit, func(rec recordbatch.Record) {
				if !full && rec.Key != nil && !f.m.put(rec.Key, rec.Off) {
					full = true
				}
			})
		})
		if err != nil {
			return 0, err
		}
		if full {
			if i == c.dirty {
				r.log.Error("cleaner-map-too-small", zap.String("topic", c.p.Topic()), zap.Int32("partition", c.p.Index()),
					zap.Int("keys", f.m.capacity()), zap.Error(ErrMapTooSmall))
				return 0, ErrMapTooSmall
			}
			return i, nil // The dedupe budget: up to the ledger the map filled in
		}
	}
	return c.end, nil
}

// rewriteRange writes what the pass keeps of ledgers [0, w's range) into
// w and returns the bytes it read.
func (r *Cleaner) rewriteRange(c cleanPlan, f *batchFilter, w *storage.Rewrite) (int64, error) {
	first, end := w.Range()
	var read int64
	err := r.eachBatch(c, first, end, func(e storage.Entry) error {
		read += int64(len(e.Payload))
		out, err := f.clean(e.Payload)
		if err != nil || out == nil {
			return err
		}
		r.io.charge(len(out))
		r.stats.written.Add(int64(len(out)))
		return w.Append(e.Offset, e.Records, recordbatch.DecodeHeader(out).MaxTimestamp, out)
	})
	return read, err
}

// eachBatch calls fn with every stored batch in [from, to) that is above
// the log start, reading at most a few MiB at once, throttled (the cleaner throttle).
func (r *Cleaner) eachBatch(c cleanPlan, from, to Offset, fn func(storage.Entry) error) error {
	const chunkBytes = 4 << 20
	for from = max(from, c.info.Start); from < to; {
		select {
		case <-r.stop:
			return errCleanerStopped // Close does not wait for a whole pass
		default:
		}
		es, err := r.store.ReadEntries(c.log, from, 0, chunkBytes)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			return nil
		}
		for _, e := range es {
			if e.Offset >= to {
				return nil
			}
			r.io.charge(len(e.Payload))
			r.stats.read.Add(int64(len(e.Payload)))
			if len(e.Payload) < recordbatch.HeaderLen {
				return fmt.Errorf("%w: entry at %d of %d bytes", recordbatch.ErrCorruptBatch, e.Offset, len(e.Payload))
			}
			if err := fn(e); err != nil {
				return err
			}
			from = e.End()
		}
	}
	return nil
}

// eachRecord calls fn with each record of batch b.
func eachRecord(b []byte, limit int64, fn func(recordbatch.Record)) error {
	sec, err := recordbatch.DecodeSection(b, limit)
	if err != nil {
		return err
	}
	recs, err := recordbatch.ParseRecords(recordbatch.DecodeHeader(b), sec)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		fn(rec)
	}
	return nil
}
