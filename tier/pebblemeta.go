package tier

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/kgateway/kgateway/storage"
)

// PebbleMeta is Meta over the store's metadata keyspace (storage
// ApplyMeta, synced):
//
//	m|tier/o/<log><ledger>     an object record (JSON), 8-byte big-endian ids
//	m|tier/p/<key>\x00<pin id> a reader pin (JSON)
//
// One process owns a pebble instance, so its compare-and-swap is a mutex
// around read and synced write; an etcd Meta uses a transaction comparing
// the key's mod revision instead.
type PebbleMeta struct {
	s  *storage.Store
	mu sync.Mutex // makes Put and Delete compare-and-swaps
}

// NewPebbleMeta keeps the object metadata in s.
func NewPebbleMeta(s *storage.Store) *PebbleMeta { return &PebbleMeta{s: s} }

var (
	objPrefix = []byte("tier/o/")
	pinPrefix = []byte("tier/p/")
)

func objKey(log storage.LogID, led storage.LedgerID) []byte {
	k := append([]byte(nil), objPrefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(log))
	return binary.BigEndian.AppendUint64(k, uint64(led))
}

func pinKey(key, id string) []byte {
	k := append(append([]byte(nil), pinPrefix...), key...)
	return append(append(k, 0), id...)
}

func (m *PebbleMeta) Get(log storage.LogID, led storage.LedgerID) (Object, error) {
	v, err := m.s.GetMeta(objKey(log, led))
	if errors.Is(err, storage.ErrNotFound) {
		return Object{}, fmt.Errorf("%w: %v %v", ErrNoObject, log, led)
	}
	if err != nil {
		return Object{}, err
	}
	return DecodeObject(v)
}

func (m *PebbleMeta) List() ([]Object, error) { return ListObjects(m.s.ScanMeta) }

func (m *PebbleMeta) Put(o Object) (Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.Get(o.Log, o.Ledger)
	switch {
	case errors.Is(err, ErrNoObject):
		cur.Version = 0
	case err != nil:
		return Object{}, err
	}
	if cur.Version != o.Version {
		return Object{}, fmt.Errorf("%w: %v %v at version %d, not %d", ErrConflict, o.Log, o.Ledger, cur.Version, o.Version)
	}
	o.Version++
	if err := m.s.ApplyMeta(storage.MetaOp{Key: objKey(o.Log, o.Ledger), Value: EncodeObject(o)}); err != nil {
		return Object{}, err
	}
	return o, nil
}

func (m *PebbleMeta) Delete(log storage.LogID, led storage.LedgerID, version uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.Get(log, led)
	if err != nil {
		return err
	}
	if cur.Version != version {
		return fmt.Errorf("%w: %v %v at version %d, not %d", ErrConflict, log, led, cur.Version, version)
	}
	return m.s.ApplyMeta(storage.MetaOp{Key: objKey(log, led), Delete: true})
}

func (m *PebbleMeta) AddPin(p Pin) error {
	v, _ := json.Marshal(p)
	return m.s.ApplyMeta(storage.MetaOp{Key: pinKey(p.Key, p.ID), Value: v})
}

func (m *PebbleMeta) RemovePin(key, id string) error {
	return m.s.ApplyMeta(storage.MetaOp{Key: pinKey(key, id), Delete: true})
}

func (m *PebbleMeta) Pins(key string) ([]Pin, error) {
	return scanPins(m.s.ScanMeta, append(append(append([]byte(nil), pinPrefix...), key...), 0))
}

func (m *PebbleMeta) AllPins() ([]Pin, error) { return ListPins(m.s.ScanMeta) }
