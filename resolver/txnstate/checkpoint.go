package txnstate

import (
	"encoding/binary"
	"fmt"
	"maps"

	"github.com/kgateway/kgateway/storage"
)

// idKey is prefix followed by id, big-endian.
func idKey(prefix []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte{}, prefix...), id)
}

// PrefixOpen and PrefixAborted are the key prefixes of the open
// transactions and the aborted index, each followed by the log id.
var (
	PrefixOpen    = []byte("resolver/txn-open/")
	PrefixAborted = []byte("resolver/aborted/")
)

func OpenKey(log storage.LogID, pid int64) []byte {
	return binary.BigEndian.AppendUint64(idKey(PrefixOpen, uint64(log)), uint64(pid))
}

func AbortedKey(log storage.LogID, last Offset) []byte {
	return binary.BigEndian.AppendUint64(idKey(PrefixAborted, uint64(log)), uint64(last))
}

// Pending is what one checkpoint takes from a Set.
type Pending struct {
	open    map[int64]struct{}
	aborted map[Offset]*Aborted
}

// TakeDirty returns the checkpoint's ops for the changed transaction state
// and starts new dirty sets; KeepDirty gives them back after a failure.
func (s *Set) TakeDirty(log storage.LogID) ([]storage.MetaOp, Pending) {
	d := Pending{open: s.dirtyOpen, aborted: s.dirtyAborted}
	s.dirtyOpen, s.dirtyAborted = map[int64]struct{}{}, map[Offset]*Aborted{}
	ops := make([]storage.MetaOp, 0, len(d.open)+len(d.aborted))
	be := binary.BigEndian
	for pid := range d.open {
		op := storage.MetaOp{Key: OpenKey(log, pid), Delete: true}
		if e := s.Open[pid]; e != nil && e.First >= 0 {
			op = storage.MetaOp{Key: op.Key, Value: be.AppendUint64(be.AppendUint16(nil, uint16(e.Epoch)), uint64(e.First))}
		}
		ops = append(ops, op)
	}
	for last, a := range d.aborted {
		op := storage.MetaOp{Key: AbortedKey(log, last), Delete: true}
		if a != nil {
			op = storage.MetaOp{Key: op.Key, Value: be.AppendUint64(be.AppendUint64(nil, uint64(a.PID)), uint64(a.First))}
		}
		ops = append(ops, op)
	}
	return ops, d
}

func (s *Set) KeepDirty(d Pending) {
	for pid := range d.open {
		s.dirtyOpen[pid] = struct{}{}
	}
	for last, a := range d.aborted {
		if _, newer := s.dirtyAborted[last]; !newer {
			s.dirtyAborted[last] = a
		}
	}
}

// Read reads a log's persisted open transactions and aborted index (the
// latter in marker-offset order: keys are big-endian).
func Read(store *storage.Store, log storage.LogID) (map[int64]*Entry, []Aborted, error) {
	be := binary.BigEndian
	open := map[int64]*Entry{}
	err := store.ScanMeta(idKey(PrefixOpen, uint64(log)), func(k, v []byte) error {
		if len(k) < 8 || len(v) != 10 {
			return fmt.Errorf("open transaction %x = %x", k, v)
		}
		open[int64(be.Uint64(k[len(k)-8:]))] = &Entry{Epoch: int16(be.Uint16(v)), First: Offset(be.Uint64(v[2:]))}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read open transactions of %s: %w", log, err)
	}
	var aborted []Aborted
	err = store.ScanMeta(idKey(PrefixAborted, uint64(log)), func(k, v []byte) error {
		if len(k) < 8 || len(v) != 16 {
			return fmt.Errorf("aborted transaction %x = %x", k, v)
		}
		aborted = append(aborted, Aborted{PID: int64(be.Uint64(v)), First: Offset(be.Uint64(v[8:])), Last: Offset(be.Uint64(k[len(k)-8:]))})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read aborted transactions of %s: %w", log, err)
	}
	return open, aborted, nil
}

// Keys lists the transaction keys of log, as deletions (to delete them
// with it).
func Keys(store *storage.Store, log storage.LogID) ([]storage.MetaOp, error) {
	var ops []storage.MetaOp
	for _, prefix := range [][]byte{PrefixOpen, PrefixAborted} {
		err := store.ScanMeta(idKey(prefix, uint64(log)), func(k, _ []byte) error {
			ops = append(ops, storage.MetaOp{Key: append([]byte(nil), k...), Delete: true})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// Load installs the persisted transaction state of a partition
// being recovered: the open transactions into set, the aborted entries
// still at or past the log start into the returned index, and those below
// it (trimmed while no checkpoint ran) as deletions for the next
// checkpoint.
func Load(set *Set, open map[int64]*Entry, aborted []Aborted, start Offset) []Aborted {
	maps.Copy(set.Open, open)
	kept := aborted[:0]
	for _, a := range aborted {
		if a.Last < start {
			set.dirtyAborted[a.Last] = nil
			continue
		}
		kept = append(kept, a)
	}
	return kept
}

// Discard makes the next checkpoint delete persisted state it will not
// use: the open transactions open and the aborted entries aborted.
func (s *Set) Discard(open map[int64]*Entry, aborted []Aborted) {
	for pid := range open {
		s.dirtyOpen[pid] = struct{}{}
	}
	for _, a := range aborted {
		s.dirtyAborted[a.Last] = nil
	}
}
