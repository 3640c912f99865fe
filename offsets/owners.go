package offsets

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Owners: the principal that created each transactional id and group, for
// the per-principal bounds (kafka/tenancy, kafka/txn; docs/DESIGN.md
// "Bounds"). The store only keeps them: one synced record per owned id,
// under its kind, so that ownership survives a restart (and, mirrored
// like every other record, a change of coordinator in a cluster). The
// callers decide what an owner record of an id that no longer exists
// means (they drop it).

// ownerTag keys owner records: ownerTag, kind, the id.
const ownerTag byte = 'w'

// Owner kinds.
const (
	OwnerTxn   byte = 'x' // a transactional id
	OwnerGroup byte = 'g' // a group (classic, consumer, share, streams)
)

func ownerPrefix(kind byte) []byte { return []byte{ownerTag, kind} }

func ownerKey(kind byte, id string) []byte { return append(ownerPrefix(kind), id...) }

// PutOwner records principal as the owner of id of kind, in one synced
// write.
func (s *Store) PutOwner(kind byte, id, principal string) error {
	if err := s.write(func(b *pebble.Batch) error { return b.Set(ownerKey(kind, id), []byte(principal), nil) }); err != nil {
		return fmt.Errorf("offsets: put owner of %q: %w", id, err)
	}
	return nil
}

// DeleteOwners removes the owner records of ids of kind, in one synced
// write.
func (s *Store) DeleteOwners(kind byte, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.write(func(b *pebble.Batch) error {
		for _, id := range ids {
			if err := b.Delete(ownerKey(kind, id), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("offsets: delete owners: %w", err)
	}
	return nil
}

// Owners returns the owner of every id of kind that has one.
func (s *Store) Owners(kind byte) (map[string]string, error) {
	return read(s, func() (map[string]string, error) {
		out := map[string]string{}
		prefix := ownerPrefix(kind)
		err := eachPrefix(s.db, prefix, func(k, v []byte) error {
			out[string(k[len(prefix):])] = string(v)
			return nil
		})
		return out, err
	})
}
