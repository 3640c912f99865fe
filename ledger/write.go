package ledger

import (
	"github.com/kgateway/kgateway/storage"
)

// Write rolls the open ledger if the policy says so, then writes the entry
// (storage.Store.Write). The caller Waits for durability. The roll decision
// and the write are one step under the append lock, so concurrent writers
// cannot both roll or both squeeze past SegmentBytes.
func (m *Managed) Write(records int, payload []byte, opts storage.AppendOptions) (*storage.Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.state.Load() {
	case stateFenced:
		return nil, ErrFenced
	case stateClosed:
		return nil, ErrClosed
	}
	if err := m.maybeRollLocked(int64(len(payload))); err != nil {
		return nil, err
	}
	p, err := m.store.Write(m.log, records, payload, opts)
	if err != nil {
		return nil, wrapStorageErr("write", m.log, err)
	}
	m.noteWrittenLocked(p.Header())
	return p, nil
}

// Append is Write + Wait.
func (m *Managed) Append(records int, payload []byte, opts storage.AppendOptions) (storage.EntryHeader, error) {
	p, err := m.Write(records, payload, opts)
	if err != nil {
		return storage.EntryHeader{}, err
	}
	if err := p.Wait(); err != nil {
		return storage.EntryHeader{}, wrapStorageErr("append", m.log, err)
	}
	return p.Header(), nil
}

// Roll seals the open ledger and opens a new one now, whatever the policy
// says (an operator's or a test's roll). It returns the new ledger's id.
func (m *Managed) Roll() (LedgerID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.state.Load() {
	case stateFenced:
		return 0, ErrFenced
	case stateClosed:
		return 0, ErrClosed
	}
	return m.rollLocked()
}

// maybeRollLocked applies the roll policy before an append of n payload
// bytes (doc.go "Rollover"; Kafka's LogSegment.shouldRoll).
func (m *Managed) maybeRollLocked(n int64) error {
	if !m.shouldRollLocked(n) {
		return nil
	}
	_, err := m.rollLocked()
	return err
}

// shouldRollLocked: never roll an empty ledger (an entry larger than
// SegmentBytes goes alone into one); roll before an append that would take
// the file past SegmentBytes, or once the ledger is older than SegmentAge.
func (m *Managed) shouldRollLocked(n int64) bool {
	o := m.mu.open
	if o.entries == 0 {
		return false
	}
	if o.end+frameOverhead+n > m.mu.cfg.SegmentBytes {
		return true
	}
	return m.mu.cfg.Now().Sub(o.created) > m.mu.cfg.SegmentAge
}

func (m *Managed) rollLocked() (LedgerID, error) {
	id, err := m.store.Roll(m.log)
	if err != nil {
		return 0, wrapStorageErr("roll", m.log, err)
	}
	m.mu.open = openLedger{id: id, created: m.mu.cfg.Now()}
	return id, nil
}

// noteWrittenLocked advances the open-ledger view past a written entry. If
// the entry landed in another ledger than we thought (someone rolled the
// log underneath us), the view restarts from that ledger.
func (m *Managed) noteWrittenLocked(h storage.EntryHeader) {
	o := &m.mu.open
	if h.Ledger != o.id {
		*o = openLedger{id: h.Ledger, created: m.mu.cfg.Now()}
	}
	o.entries = max(o.entries, int64(h.Entry)+1)
	o.end = max(o.end, h.Pos+frameOverhead+int64(h.Size))
}

// frameOverhead is the bytes storage's entry frame adds to each payload
// (length, CRC32C, offset, records, max timestamp: storage/frame.go). The
// roll policy counts file bytes, as Kafka's segment.bytes does;
// TestRollBySize pins this against LedgerInfo.Bytes.
const frameOverhead = 28
