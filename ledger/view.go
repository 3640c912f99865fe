package ledger

import (
	"errors"

	"github.com/kgateway/kgateway/storage"
)

// View is what a read sees of a log (the read flow's step 3, doc.go "Read
// by offset"): the committed log, or its compacted view.
type View int8

const (
	// Committed is every durable entry, in the generation the index names
	// for each range (V1).
	Committed View = iota
	// TopicCompacted is the log's compacted materialization kept beside
	// it, where there is one (V2).
	TopicCompacted
)

// compacted is a compacted view's log: a second storage log whose entries
// keep the offsets of the log they were copied from.
type compacted struct {
	log    LogID
	target target
}

// SetCompactedView names the storage log holding this log's compacted
// view (V2); ok false removes it. Reads planned after the call use it.
func (m *Managed) SetCompactedView(log LogID, ok bool) {
	if !ok {
		m.view.Store(nil)
		return
	}
	m.view.Store(&compacted{log: log, target: &segments{store: m.store, log: log}})
}

// readCompacted is one attempt of a TopicCompacted read (V2): the view's
// entries below its end, the committed log's from there on (its tail, not
// yet in the view), each under its own snapshot. The snapshot returned
// spans the view's start to the committed log's end, and says where the
// view ends (Snapshot.ViewEnd). Without a view it is the committed read.
func (m *Managed) readCompacted(q readArgs) (Snapshot, []Entry, error) {
	c := m.view.Load()
	if c == nil {
		return m.readFrom(q)
	}
	from := q.from
	vb, hdrs, err := m.store.Headers(c.log, from, q.maxEntries, q.maxBytes)
	if errors.Is(err, storage.ErrNoLog) {
		return m.readFrom(q) // the view was just removed
	}
	if err != nil {
		return Snapshot{}, nil, m.storeReadErr(err)
	}
	if vb.End <= vb.Start || from >= vb.End || (from >= vb.Start && len(hdrs) == 0) {
		// Nothing in the view at or after from (no view yet, past its
		// end, or a gap up to its end): the committed log's tail.
		tail := q
		tail.from = max(from, vb.End)
		sn, out, err := m.readFrom(tail)
		if vb.End > vb.Start {
			sn.Start, sn.ViewEnd = min(sn.Start, vb.Start), vb.End
		}
		return sn, out, err
	}
	b, err := m.store.Bounds(m.log)
	if err != nil {
		return Snapshot{}, nil, m.storeReadErr(err)
	}
	sn := Snapshot{Start: min(vb.Start, b.Start), End: b.End, ViewEnd: vb.End}
	if from < vb.Start {
		return sn, nil, nil
	}
	out, err := c.target.read(candidate{kind: localSegment}, hdrs) // a view is local only
	if errors.Is(err, storage.ErrNoLog) && len(out) == 0 {
		return m.readFrom(q) // the view was just removed
	}
	if err != nil && len(out) > 0 {
		err = nil // R10
	}
	if err != nil {
		err = wrapStorageErr("read", c.log, err)
	}
	return sn, out, err
}

// SnapshotView is Snapshot in view v: for TopicCompacted with a view,
// the start is the view's when it is lower, and ViewEnd is set (V2).
func (m *Managed) SnapshotView(v View) (Snapshot, error) {
	sn, err := m.Snapshot()
	c := m.view.Load()
	if err != nil || v == Committed || c == nil {
		return sn, err
	}
	vb, err := m.store.Bounds(c.log)
	if errors.Is(err, storage.ErrNoLog) {
		return sn, nil
	}
	if err != nil {
		return Snapshot{}, m.storeReadErr(err)
	}
	if vb.End > vb.Start {
		sn.Start, sn.ViewEnd = min(sn.Start, vb.Start), vb.End
	}
	return sn, nil
}
