package cleaner

import (
	"errors"
	"github.com/kgateway/kgateway/recordbatch"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// The cleaner's work on compacted views (the view log, resolver/doc.go "Compacted view"): a
// view pass copies the source's stable sealed range that the view does
// not hold yet, then cleans the view as a compacted log (the dedupe budget, the latest-record rewrite, the compaction rules).

// emptyTxnFilter is the transactions of a view: none (the view log).
func emptyTxnFilter() *txnFilter {
	return &txnFilter{aborted: map[int64][]Aborted{}, byMarker: map[Offset]Aborted{}, seen: map[int64]bool{}}
}

// viewPasses runs a view pass on every partition with a view on that is
// not busy; worked reports that one changed a view.
func (r *Cleaner) viewPasses(m *offsetMap, now time.Time, skip map[Partition]bool) (worked bool, errs []error) {
	for _, p := range r.host.ViewPartitions() {
		if skip[p] || !r.take(p) {
			continue
		}
		w, err := r.viewPass(p, m, now)
		r.release(p)
		if !r.host.ViewStillOn(p) {
			// Turned off or deleted during the pass, which may have
			// created the view log after that change removed it (view removal).
			err = errors.Join(err, r.host.SyncViews())
		}
		worked = worked || w
		if err != nil && !errors.Is(err, r.opts.UnknownTopic) && !errors.Is(err, storage.ErrNoLog) && !errors.Is(err, errCleanerStopped) {
			r.host.ViewFailed(p, err)
			errs = append(errs, err)
			if skip != nil {
				skip[p] = true
			}
		}
	}
	return worked, errs
}

// take marks p busy; false when another thread has it.
func (r *Cleaner) take(p Partition) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.busy[p] {
		return false
	}
	r.mu.busy[p] = true
	return true
}

// viewPass brings p's view up to date (the view log): the source's stable sealed
// range past the view's end is copied into the view log and sealed there,
// and the view is cleaned when it took data or a tombstone's horizon
// passed. worked reports that the view changed.
func (r *Cleaner) viewPass(p Partition, m *offsetMap, now time.Time) (worked bool, err error) {
	s, err := p.CleanSettings()
	if err != nil {
		return false, err
	}
	vlog, err := p.OpenView()
	if err != nil {
		return false, err
	}
	copied, err := r.copyToView(p, vlog, s, now)
	if err != nil {
		return copied, err
	}
	info, err := r.store.Info(vlog)
	if err != nil {
		return copied, err
	}
	c := cleanPlan{p: p, log: vlog, view: true, compact: true, s: s, info: info, end: len(info.Ledgers) - 1}
	if c.end > 0 && info.Ledgers[0].Gen > 0 {
		c.dirty = 1
	}
	c.measure()
	hz := r.horizonOf(vlog)
	// Due with dirty ledgers (taken now, or left by a pass whose map
	// filled, the dedupe budget) or a passed tombstone horizon (the tombstone horizon).
	if c.end == 0 || (c.dirtyBytes == 0 && (hz < 0 || now.UnixMilli() < hz)) {
		return copied, nil
	}
	start := time.Now()
	err = r.cleanPartition(c, m, now)
	d := time.Since(start)
	r.stats.lastPass.Store(int64(d))
	r.stats.passTime.Add(int64(d))
	if err == nil {
		r.stats.passes.Add(1)
	}
	return true, err
}

// copyToView appends to the view log the source's batches from the view's
// end to the stable end (the cleanable range, the LSO bound on cleaning: every transaction there has ended):
// committed data only, no marker and no batch of an aborted transaction
// (the aborted-transaction index says which), each entry spanning from
// the end of the one before it to its batch's end so the batch keeps its
// offsets (V2). The view's end is thus always where the copy stopped, and
// a crash mid-copy resumes from there. It seals what it copied.
func (r *Cleaner) copyToView(p Partition, vlog storage.LogID, s Settings, now time.Time) (bool, error) {
	info, err := r.store.Info(p.Log())
	if err != nil {
		return false, err
	}
	vb, err := r.store.Bounds(vlog)
	if err != nil {
		return false, err
	}
	k, err := r.stableEnd(p, info, s, now)
	if err != nil || k == 0 {
		return false, err
	}
	end := info.Ledgers[k].FirstOffset
	// scanned: a range holding nothing to copy (only markers and aborted
	// batches) leaves the view's end where it was; it is not read again.
	scanned := r.viewScanned(vlog, vb.End)
	if end <= scanned {
		return false, nil
	}
	tf := newTxnFilter(p.AbortedBefore(end))
	next := vb.End
	var last *storage.Pending
	src := cleanPlan{p: p, log: p.Log(), info: info}
	err = r.eachBatch(src, max(scanned, info.Start), end, func(e storage.Entry) error {
		h := recordbatch.DecodeHeader(e.Payload)
		if e.Offset < next || h.Control() || tf.abortedBatch(h) {
			return nil
		}
		pd, err := r.store.Write(vlog, int(e.End()-next), e.Payload, storage.AppendOptions{MaxTime: h.MaxTimestamp})
		if err != nil {
			return err
		}
		r.stats.written.Add(int64(len(e.Payload)))
		next, last = e.End(), pd
		return nil
	})
	if last != nil {
		if werr := last.Wait(); err == nil {
			err = werr
		}
	}
	if err == nil {
		r.setViewScanned(vlog, next, end)
	}
	if err != nil || last == nil {
		return false, err
	}
	if _, err := r.store.Roll(vlog); err != nil {
		return true, err
	}
	return true, nil
}

// viewScanned is how far the source was read for view log l, whose end
// is end: end itself unless a pass read past it and left the view's end
// there (a view log removed and made again starts over).
func (r *Cleaner) viewScanned(l storage.LogID, end Offset) Offset {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.mu.scanned[l]; ok && s.viewEnd == end {
		return max(end, s.read)
	}
	return end
}

// setViewScanned records that the source was read up to read while the
// view's end was viewEnd.
func (r *Cleaner) setViewScanned(l storage.LogID, viewEnd, read Offset) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.scanned[l] = scanMark{viewEnd: viewEnd, read: read}
}

// scanMark is how far a view pass read its source (read) and the view's
// end it left (viewEnd).
type scanMark struct{ viewEnd, read Offset }
