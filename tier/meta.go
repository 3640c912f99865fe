package tier

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// State is an object's lifecycle state (B2).
type State string

const (
	// Uploading: an upload attempt owns the object name until
	// LeaseUntil; the object may be missing or partial. Never read.
	Uploading State = "uploading"
	// Published: the object is whole and verified (B3); reads may use it.
	Published State = "published"
	// Deleting: retention or deletion took it; no new read pins it, and
	// it is removed once no live pin remains (B6).
	Deleting State = "deleting"
)

// Object is the metadata of one ledger's copy in the object store: the
// index entry mapping the ledger's offset range to its object.
type Object struct {
	Log     storage.LogID
	Ledger  storage.LedgerID
	Gen     uint64 // the ledger's generation (storage "Generations")
	State   State
	Key     string // the object's name in the bucket
	PubID   string // unique per upload attempt: the publication id
	Owner   string // the node whose upload attempt this is
	Version uint64 // bumped by every Put (compare-and-swap, B1)

	FirstOffset storage.Offset // the range [FirstOffset, EndOffset)
	EndOffset   storage.Offset
	Entries     int64
	MaxTime     int64 // the ledger's largest entry max timestamp (ms)
	FramesBytes int64
	IndexBytes  int64
	Size        int64  // the whole object: frames, index, footer
	FramesSHA   string // SHA-256 (hex) of the frames region
	IndexSHA    string // SHA-256 (hex) of the object-level index
	LeaseUntil  int64  // unix ns: an Uploading attempt's lease
	Created     int64  // unix ns
}

// Covers reports whether the object holds the range [from, to).
func (o Object) Covers(from, to storage.Offset) bool {
	return from >= o.FirstOffset && to <= o.EndOffset
}

// Pin is a durable reader pin (B5): a lease record naming an object, with
// an expiry. It is no cursor: it records nothing about what is read, and
// never changes what a ledger holds.
type Pin struct {
	Key     string // the object
	ID      string
	Owner   string
	Expires int64 // unix ns
}

// Live reports whether the pin still protects its object at now.
func (p Pin) Live(now time.Time) bool { return p.Expires > now.UnixNano() }

// Meta is the object metadata: objects per log with their lifecycle and
// ranges, and reader pins. The pebble implementation (PebbleMeta) keeps it
// beside the ledger index; a shared implementation (etcd) must keep the
// same contract, because no caller relies on being the only process (B1):
// every change of an object is a compare-and-swap on its Version.
type Meta interface {
	// Get returns the object of (log, ledger), or ErrNoObject.
	Get(log storage.LogID, led storage.LedgerID) (Object, error)
	// List returns every object, in (log, ledger) order.
	List() ([]Object, error)
	// Put stores o if the stored version is o.Version (0: no record),
	// and returns it with its new version; ErrConflict otherwise.
	Put(o Object) (Object, error)
	// Delete removes the record if its version is version; ErrConflict
	// otherwise.
	Delete(log storage.LogID, led storage.LedgerID, version uint64) error
	// AddPin stores a pin durably before it returns.
	AddPin(p Pin) error
	// RemovePin removes one pin (none: no error).
	RemovePin(key, id string) error
	// Pins returns an object's pins, expired ones included.
	Pins(key string) ([]Pin, error)
	// AllPins returns every pin.
	AllPins() ([]Pin, error)
}

// Errors of Meta.
var (
	ErrNoObject = errors.New("tier: no object record")
	ErrConflict = errors.New("tier: version conflict")
)

// recordVersion is the encoding version of an object record.
const recordVersion = 1

type objectRecord struct {
	V int `json:"v"`
	Object
}

// EncodeObject is an object record's stored form, the same in every Meta:
// JSON with an encoding version.
func EncodeObject(o Object) []byte {
	b, _ := json.Marshal(objectRecord{V: recordVersion, Object: o})
	return b
}

// DecodeObject reads an EncodeObject record; anything else is
// storage.ErrCorrupt.
func DecodeObject(b []byte) (Object, error) {
	var r objectRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return Object{}, fmt.Errorf("%w: object record: %w", storage.ErrCorrupt, err)
	}
	if r.V != recordVersion {
		return Object{}, fmt.Errorf("%w: object record version %d", storage.ErrCorrupt, r.V)
	}
	return r.Object, nil
}
