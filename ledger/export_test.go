package ledger

import "fmt"

// PositionOf maps an offset to the position of the entry containing it
// (floor lookup through the entry index, O(log n)), so that the tests can
// name by offset the positions ReadEntries takes. Storage's errors
// (storage.ErrTrimmed, storage.ErrOutOfRange, ...) come back wrapped.
func (m *Managed) PositionOf(off Offset) (Position, error) {
	if m.state.Load() == stateClosed {
		return Position{}, ErrClosed
	}
	h, err := m.store.Floor(m.log, off)
	if err != nil {
		return Position{}, fmt.Errorf("ledger: position of %v in %v: %w", off, m.log, err)
	}
	return Position{Ledger: h.Ledger, Entry: h.Entry}, nil
}
