package storage

import "github.com/cockroachdb/pebble/v2"

// Keyspace calls fn for every key in the store's pebble, every prefix, in
// key order, as the live store sees it: the memtable (writes not yet
// flushed, or not yet synced) included. It is for tests and diagnostics
// that must prove a code path wrote nothing to the index (R1 in ledger/):
// a file-level check cannot see an unsynced write still in pebble's WAL
// buffer, this can. The slices are valid only during the call.
func (s *Store) Keyspace(fn func(key, value []byte) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := fn(it.Key(), v); err != nil {
			return err
		}
	}
	return it.Error()
}

// IndexWrites is the number of logical bytes written to pebble's WAL since
// Open. Any write moves it, even one that leaves every key's value as it
// was (which Keyspace cannot see) and even one not yet synced. For tests
// (R1) and diagnostics.
func (s *Store) IndexWrites() uint64 {
	if err := s.enter(); err != nil {
		return 0
	}
	defer s.closeMu.RUnlock()
	return s.db.Metrics().WAL.BytesIn
}
