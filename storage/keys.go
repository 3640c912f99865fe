package storage

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Key layout in pebble (see doc.go "Keyspace"). Every integer is big-endian
// so that byte order is numeric order.
const (
	prefixLog     = 'l' // l|log                    -> logMeta
	prefixLedger  = 'g' // g|log|ledger             -> ledgerMeta
	prefixIndex   = 'i' // i|log|offset             -> indexValue
	prefixPos     = 'p' // p|log|ledger|entry       -> offset (legacy: removed, never written)
	prefixTime    = 't' // t|log|runmax|offset      -> empty
	prefixMeta    = 'm' // m|user key               -> user value
	prefixStore   = 's' // s|name                   -> store-wide state
	prefixJournal = 'j' // j|log|ledger|pos        -> frame (journal.go)
)

var keyNextLedger = []byte{prefixStore, 'n', 'e', 'x', 't', '-', 'l', 'e', 'd', 'g', 'e', 'r'}

func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

func logKey(id LogID) []byte { return appendU64([]byte{prefixLog}, uint64(id)) }

func ledgerKey(id LogID, led LedgerID) []byte {
	return appendU64(appendU64([]byte{prefixLedger}, uint64(id)), uint64(led))
}

// indexKeyLen and timeKeyLen are the sizes of an entry index key and of a
// time index key.
const (
	indexKeyLen = 1 + 8 + 8
	timeKeyLen  = 1 + 8 + 8 + 8
)

func indexKey(id LogID, off Offset) []byte {
	b := make([]byte, indexKeyLen)
	putIndexKey(b, id, off)
	return b
}

// putIndexKey writes indexKey(id, off) into b, which has indexKeyLen bytes.
func putIndexKey(b []byte, id LogID, off Offset) {
	b[0] = prefixIndex
	binary.BigEndian.PutUint64(b[1:], uint64(id))
	binary.BigEndian.PutUint64(b[9:], uint64(off))
}

func posKey(id LogID, led LedgerID, e EntryID) []byte {
	return appendU64(appendU64(appendU64([]byte{prefixPos}, uint64(id)), uint64(led)), uint64(e))
}

// timeOrder maps a signed timestamp to an unsigned value of the same order
// (Kafka uses -1 for "no timestamp").
func timeOrder(ts int64) uint64 { return uint64(ts) ^ (1 << 63) }

func timeKey(id LogID, runMax int64, off Offset) []byte {
	b := make([]byte, timeKeyLen)
	putTimeKey(b, id, runMax, off)
	return b
}

// putTimeKey writes timeKey(id, runMax, off) into b, which has timeKeyLen
// bytes.
func putTimeKey(b []byte, id LogID, runMax int64, off Offset) {
	b[0] = prefixTime
	binary.BigEndian.PutUint64(b[1:], uint64(id))
	binary.BigEndian.PutUint64(b[9:], timeOrder(runMax))
	binary.BigEndian.PutUint64(b[17:], uint64(off))
}

func metaKey(k []byte) []byte { return append([]byte{prefixMeta}, k...) }

// logPrefixRange returns [start, end) covering every key of prefix p for log id.
func logPrefixRange(p byte, id LogID) (start, end []byte) {
	return appendU64([]byte{p}, uint64(id)), appendU64([]byte{p}, uint64(id)+1)
}

// prefixEnd returns the smallest key greater than every key with prefix p,
// or nil when there is none (all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// logMeta is the durable per-log record.
type logMeta struct {
	State LogState
	Start Offset
}

func (m logMeta) encode() []byte {
	b := []byte{byte(m.State)}
	return appendU64(b, uint64(m.Start))
}

func decodeLogMeta(b []byte) (logMeta, error) {
	if len(b) != 9 {
		return logMeta{}, fmt.Errorf("%w: log record of %d bytes", ErrCorrupt, len(b))
	}
	return logMeta{State: LogState(b[0]), Start: Offset(binary.BigEndian.Uint64(b[1:]))}, nil
}

// ledgerMeta is the durable per-ledger record. Entries and Bytes are final
// only once Sealed; for the open ledger they are recovered from the index and
// the file tail (doc.go invariant I3).
type ledgerMeta struct {
	FirstOffset Offset
	FirstCum    int64 // log Cum before the ledger's first entry
	Entries     int64
	Bytes       int64
	Created     int64 // unix nanoseconds
	Sealed      bool
	// Gen is the ledger's generation (doc.go "Generations"): 0 for a
	// ledger written by appends, one more than the highest it replaced
	// for a rewrite. Records of generation 0 are 41 bytes (as written by
	// earlier versions), later ones 49.
	Gen uint64
	// Offloaded: the ledger's entries are kept in the object store and
	// its local file is gone (doc.go "Offloaded ledgers"). Such a record
	// is 50 bytes: the 49 of a generation and a flags byte.
	Offloaded bool
}

func (m ledgerMeta) encode() []byte {
	b := make([]byte, 0, 49)
	b = appendU64(b, uint64(m.FirstOffset))
	b = appendU64(b, uint64(m.FirstCum))
	b = appendU64(b, uint64(m.Entries))
	b = appendU64(b, uint64(m.Bytes))
	b = appendU64(b, uint64(m.Created))
	sealed := byte(0)
	if m.Sealed {
		sealed = 1
	}
	b = append(b, sealed)
	if m.Gen > 0 || m.Offloaded {
		b = appendU64(b, m.Gen)
	}
	if m.Offloaded {
		b = append(b, flagOffloaded)
	}
	return b
}

// flagOffloaded is the flags byte of an offloaded ledger's record.
const flagOffloaded = 1

func decodeLedgerMeta(b []byte) (ledgerMeta, error) {
	if len(b) != 41 && len(b) != 49 && len(b) != 50 {
		return ledgerMeta{}, fmt.Errorf("%w: ledger record of %d bytes", ErrCorrupt, len(b))
	}
	u := func(i int) uint64 { return binary.BigEndian.Uint64(b[i*8:]) }
	m := ledgerMeta{
		FirstOffset: Offset(u(0)), FirstCum: int64(u(1)), Entries: int64(u(2)),
		Bytes: int64(u(3)), Created: int64(u(4)), Sealed: b[40] == 1,
	}
	if len(b) >= 49 {
		m.Gen = binary.BigEndian.Uint64(b[41:])
	}
	if len(b) == 50 {
		if b[49] != flagOffloaded {
			return ledgerMeta{}, fmt.Errorf("%w: ledger record flags %#x", ErrCorrupt, b[49])
		}
		m.Offloaded = true
	}
	return m, nil
}

func (m ledgerMeta) info(id LedgerID) LedgerInfo {
	return LedgerInfo{
		ID: id, FirstOffset: m.FirstOffset, Entries: m.Entries, Bytes: m.Bytes,
		Created: time.Unix(0, m.Created), Sealed: m.Sealed, Gen: m.Gen, Offloaded: m.Offloaded,
	}
}

// indexValueLen is the size of an entry index value.
const indexValueLen = 4 + 8 + 4 + 8 + 8 + 8 + 8

func encodeIndexValue(h EntryHeader) []byte {
	b := make([]byte, indexValueLen)
	putIndexValue(b, h)
	return b
}

// putIndexValue writes encodeIndexValue(h) into b, which has
// indexValueLen bytes.
func putIndexValue(b []byte, h EntryHeader) {
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(h.Records))
	be.PutUint64(b[4:], uint64(h.MaxTime))
	be.PutUint32(b[12:], uint32(h.Size))
	be.PutUint64(b[16:], uint64(h.Cum))
	be.PutUint64(b[24:], uint64(h.Ledger))
	be.PutUint64(b[32:], uint64(h.Entry))
	be.PutUint64(b[40:], uint64(h.Pos))
}

func decodeIndex(key, val []byte) (EntryHeader, error) {
	if len(key) != indexKeyLen || len(val) != indexValueLen {
		return EntryHeader{}, fmt.Errorf("%w: index record of %d bytes", ErrCorrupt, len(val))
	}
	be := binary.BigEndian
	return EntryHeader{
		Offset:  Offset(be.Uint64(key[9:])),
		Records: int32(be.Uint32(val[0:])),
		MaxTime: int64(be.Uint64(val[4:])),
		Size:    int32(be.Uint32(val[12:])),
		Cum:     int64(be.Uint64(val[16:])),
		Ledger:  LedgerID(be.Uint64(val[24:])),
		Entry:   EntryID(be.Uint64(val[32:])),
		Pos:     int64(be.Uint64(val[40:])),
	}, nil
}
