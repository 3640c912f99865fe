package storage

// STUB: the storage helper replaces every body in this file. The signatures
// are the contract the other layers compile against.

var errTODO = ErrClosed

// Store is one data directory: segment files plus one pebble instance for
// the ledger lists, the entry index, the time index and metadata.
type Store struct{}

// Pending is an append whose bytes are written but maybe not yet durable.
type Pending struct{}

// MetaOp is one write to the metadata keyspace.
type MetaOp struct {
	Key, Value []byte
	Delete     bool
}

// Open opens (creating if needed) the store in dir. It scans only the
// unindexed tail of each log's newest ledger, truncating a torn tail.
func Open(dir string, opts Options) (*Store, error) { return nil, errTODO }

// Close syncs and closes. Appends after Close fail with ErrClosed.
func (s *Store) Close() error { return errTODO }

// CreateLog creates an empty NORMAL log with one open ledger.
func (s *Store) CreateLog(id LogID) error { return errTODO }

// DeleteLog removes the log, its index and, once unpinned, its files.
func (s *Store) DeleteLog(id LogID) error { return errTODO }

// Logs lists every log, in ID order.
func (s *Store) Logs() []LogID { return nil }

// Info returns one consistent view of the log's bounds and ledger list.
func (s *Store) Info(id LogID) (LogInfo, error) { return LogInfo{}, errTODO }

// Append writes payload as one entry of records records at the log's next
// offset and returns once the entry is durable (D1). It is Write + Wait.
func (s *Store) Append(id LogID, records int, payload []byte, opts AppendOptions) (EntryHeader, error) {
	return EntryHeader{}, errTODO
}

// Write assigns the entry its offset and writes its bytes, without waiting
// for durability. Offsets are dense and in Write order (D3). The caller must
// not report the entry as acknowledged before Wait returns nil.
func (s *Store) Write(id LogID, records int, payload []byte, opts AppendOptions) (*Pending, error) {
	return nil, errTODO
}

// Header is the entry's descriptor (offset, position) as assigned by Write.
func (p *Pending) Header() EntryHeader { return EntryHeader{} }

// Wait blocks until the entry is durable and indexed, or its group commit
// failed (then the log is failed: ErrFailed until reopened).
func (p *Pending) Wait() error { return errTODO }

// Roll seals the log's open ledger and opens a new, empty one.
func (s *Store) Roll(id LogID) (LedgerID, error) { return 0, errTODO }

// ReadEntries returns durable entries from the one containing start, at
// most maxRecords records' worth of entries and maxBytes of payload, but
// always at least one entry if any is readable.
func (s *Store) ReadEntries(id LogID, start Offset, maxRecords, maxBytes int) ([]Entry, error) {
	return nil, errTODO
}

// FirstOffset describes the first visible (not soft-trimmed) entry.
func (s *Store) FirstOffset(id LogID) (EntryHeader, error) { return EntryHeader{}, errTODO }

// LastOffset describes the last durable entry.
func (s *Store) LastOffset(id LogID) (EntryHeader, error) { return EntryHeader{}, errTODO }

// Floor returns the durable entry containing off: a floor lookup in the
// entry index, O(log n).
func (s *Store) Floor(id LogID, off Offset) (EntryHeader, error) { return EntryHeader{}, errTODO }

// IndexRange returns up to max durable index entries starting with the one
// containing from. Pair with ReadIndexed to read without re-resolving.
func (s *Store) IndexRange(id LogID, from Offset, max int) ([]EntryHeader, error) {
	return nil, errTODO
}

// EntryAt looks an entry up by position.
func (s *Store) EntryAt(id LogID, ledger LedgerID, entry EntryID) (EntryHeader, error) {
	return EntryHeader{}, errTODO
}

// ReadIndexed reads the payloads of hdrs in order. On an error it returns
// the entries read before it together with the error.
func (s *Store) ReadIndexed(id LogID, hdrs []EntryHeader) ([]Entry, error) { return nil, errTODO }

// SeekTime returns the first entry whose running max timestamp is >= ts,
// through the time index (O(log n)); ErrNotFound when there is none.
func (s *Store) SeekTime(id LogID, ts int64) (EntryHeader, error) { return EntryHeader{}, errTODO }

// SoftTrim makes entries below off invisible and moves the log start to
// off (durably). It never moves the start backwards.
func (s *Store) SoftTrim(id LogID, off Offset) error { return errTODO }

// HardTrim removes every sealed ledger all of whose entries are below off.
// Files a read has pinned are removed when the last pin is released.
func (s *Store) HardTrim(id LogID, off Offset) error { return errTODO }

// Fence makes appends fail with ErrFenced; Activate undoes it. Durable.
func (s *Store) Fence(id LogID) error    { return errTODO }
func (s *Store) Activate(id LogID) error { return errTODO }

// Pin holds the named ledgers' files for a read in progress. It fails with
// ErrRemoved if one is already removed. release is idempotent.
func (s *Store) Pin(id LogID, ledgers ...LedgerID) (release func(), err error) {
	return func() {}, errTODO
}

// ApplyMeta applies ops atomically and durably to the metadata keyspace,
// which is separate from the index keyspace.
func (s *Store) ApplyMeta(ops ...MetaOp) error { return errTODO }

// GetMeta returns a copy of the value, or ErrNotFound.
func (s *Store) GetMeta(key []byte) ([]byte, error) { return nil, errTODO }

// ScanMeta calls fn for every key with the prefix, in key order. The slices
// are valid only during the call.
func (s *Store) ScanMeta(prefix []byte, fn func(key, value []byte) error) error { return errTODO }
