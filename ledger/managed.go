package ledger

import "github.com/kgateway/kgateway/storage"

// STUB: the ledger helper replaces every body in this file.

// Managed is the managed ledger of one partition over one storage log.
type Managed struct{}

// Open opens the managed ledger over log, creating the log if it is missing.
func Open(store *storage.Store, log LogID, cfg Config) (*Managed, error) { return nil, ErrClosed }

// Log is the storage log underneath.
func (m *Managed) Log() LogID { return 0 }

// Write rolls the open ledger if the policy says so, then writes the entry
// (storage.Store.Write). The caller Waits for durability.
func (m *Managed) Write(records int, payload []byte, opts storage.AppendOptions) (*storage.Pending, error) {
	return nil, ErrClosed
}

// Append is Write + Wait.
func (m *Managed) Append(records int, payload []byte, opts storage.AppendOptions) (storage.EntryHeader, error) {
	return storage.EntryHeader{}, ErrClosed
}

// ReadEntries is the cursorless read, R1–R11 (doc.go).
func (m *Managed) ReadEntries(start Position, maxEntries, maxBytes int, maxPosition Position) ([]Entry, error) {
	return nil, ErrClosed
}

// LastConfirmed is the position of the last durable entry; ok is false when
// the ledger has none.
func (m *Managed) LastConfirmed() (pos Position, ok bool) { return Position{}, false }

// PositionOf maps an offset to the position of the entry containing it
// (floor lookup through the entry index, O(log n)).
func (m *Managed) PositionOf(off Offset) (Position, error) { return Position{}, ErrClosed }

// Fence fences the ledger: appends and reads fail with ErrFenced (R11).
func (m *Managed) Fence() error { return ErrClosed }

// Close closes the managed ledger (not the store). Later calls fail.
func (m *Managed) Close() error { return nil }
