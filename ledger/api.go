package ledger

import (
	"errors"
	"math"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// This file is the managed-ledger contract. resolver/ codes against these
// names; change a signature only together with its callers.

// The coordinate types are storage's, named here so callers of this package
// need not import storage for them.
type (
	LogID    = storage.LogID
	Offset   = storage.Offset
	LedgerID = storage.LedgerID
	EntryID  = storage.EntryID
	Entry    = storage.Entry
)

// Earliest and Latest are the special starts of a read (R4): Earliest is
// the first available entry, Latest after the last confirmed one. They
// are the smallest and the largest offset, so no real entry starts at
// either: Latest, like any start at or past the end, reads nothing (R5);
// Earliest is the one start below the log start that reads from it (R3).
const (
	Earliest Offset = math.MinInt64
	Latest   Offset = math.MaxInt64
	// NoLimit as maxOffset bounds a read only by its other limits (R7).
	NoLimit = Latest
)

// Snapshot is the state of the log a read was made under (R8), fixed once
// per read: Start is the first available offset (the soft-trim point,
// Kafka's log start) and End the offset after the last confirmed entry
// (Kafka's high watermark).
type Snapshot struct {
	Start, End Offset
	// ViewEnd, for a TopicCompacted read of a log with a compacted view,
	// is where the view ends: entries below it came from the view (V2).
	// 0 otherwise.
	ViewEnd Offset
}

// Sentinel errors.
var (
	ErrFenced  = errors.New("ledger: fenced")
	ErrInvalid = errors.New("ledger: invalid argument")
	ErrClosed  = errors.New("ledger: closed")
)

// Config is the rollover policy (Kafka's segment.bytes and segment.ms).
type Config struct {
	SegmentBytes int64         // roll before an append that would pass this; 0 means 1 GiB
	SegmentAge   time.Duration // roll the open ledger once it is this old; 0 means 7 days
	Now          func() time.Time
	// Tier, when set at Open, reads offloaded ledgers from the object
	// store (read.go targetOf); nil: local segment files only.
	Tier *tier.Tier
}
