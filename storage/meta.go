package storage

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// The metadata keyspace ('m' prefix) belongs to the layers above (topic
// bindings, configs, producer state). It shares pebble with the index but no
// key: every user key is stored under the prefix.

// ApplyMeta applies ops atomically and durably to the metadata keyspace,
// which is separate from the index keyspace.
func (s *Store) ApplyMeta(ops ...MetaOp) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	b := s.db.NewBatch()
	defer b.Close()
	for _, op := range ops {
		if op.Delete {
			_ = b.Delete(metaKey(op.Key), nil)
		} else {
			_ = b.Set(metaKey(op.Key), op.Value, nil)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: apply meta: %w", err)
	}
	return nil
}

// GetMeta returns a copy of the value, or ErrNotFound.
func (s *Store) GetMeta(key []byte) ([]byte, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	return s.get(metaKey(key))
}

// ScanMeta calls fn for every key with the prefix, in key order. The slices
// are valid only during the call. An error from fn stops the scan and is
// returned.
func (s *Store) ScanMeta(prefix []byte, fn func(key, value []byte) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	lo := metaKey(prefix)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := fn(it.Key()[1:], v); err != nil {
			return err
		}
	}
	return it.Error()
}
