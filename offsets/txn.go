package offsets

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Transaction state and pending transactional offsets (O4–O7). The
// transaction coordinator (kafka/txn) owns the meaning of the states; the
// store keeps them durably and moves pending offsets atomically.

// PutTxn records a transaction's state in one synced write (O4): when it
// returns nil the state survives a crash.
func (s *Store) PutTxn(t Txn) error {
	if t.ID == "" {
		return fmt.Errorf("%w: transaction without an id", ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	if err := s.set(txnKey(t.ID), encodeTxn(t)); err != nil {
		return fmt.Errorf("offsets: put transaction %q: %w", t.ID, err)
	}
	return nil
}

// DeleteTxn removes a transaction's state and any pending offsets it still
// holds in its groups, in one synced batch (transactional.id.expiration.ms).
func (s *Store) DeleteTxn(t Txn) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, g := range t.Groups {
		prefix := pendingTxnPrefix(g, t.ID)
		if err := b.DeleteRange(prefix, prefixEnd(prefix), nil); err != nil {
			return err
		}
	}
	if err := b.Delete(txnKey(t.ID), nil); err != nil {
		return err
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("offsets: delete transaction %q: %w", t.ID, err)
	}
	return nil
}

// Txns returns every transaction the store holds, sorted by id.
func (s *Store) Txns() ([]Txn, error) {
	return read(s, func() ([]Txn, error) { return scanTag(s.db, txnTag, decodeTxn) })
}

// PutPending stores TxnOffsetCommit offsets of transaction txnID for group
// in one synced batch (O5): durable when it returns nil, and invisible to
// Get, GroupOffsets and retention until EndTxn commits them. A later
// pending offset of the same transaction and partition replaces the
// earlier one. Zero CommitTimes are stamped with Options.Now.
func (s *Store) PutPending(txnID, group string, commits []Commit) error {
	if len(commits) > 0 && txnID == "" {
		return fmt.Errorf("%w: pending offsets without a transaction", ErrInvalid)
	}
	err := s.putCommits(commits, func(tp TopicPartition) []byte { return pendingKey(group, txnID, tp) })
	if err == ErrClosed { // unwrapped, as every other call returns it
		return err
	}
	if err != nil {
		return fmt.Errorf("offsets: pending commit %q/%q: %w", txnID, group, err)
	}
	return nil
}

// EndTxn completes transaction done.ID's offsets in one synced batch that
// also writes done (its Complete state) (O6): on commit every pending
// offset of the transaction in each of groups becomes the group's
// committed offset, on abort they are dropped; either way none is pending
// afterwards. A crash leaves either all of it or none of it. Calling it
// again is harmless: there is nothing pending left to move.
func (s *Store) EndTxn(groups []string, done Txn, commit bool) error {
	t := done
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, g := range groups {
		if err := s.endGroup(b, g, t.ID, commit); err != nil {
			return err
		}
	}
	if err := b.Set(txnKey(t.ID), encodeTxn(t), nil); err != nil {
		return err
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("offsets: end transaction %q: %w", t.ID, err)
	}
	return nil
}

// committedAfter reports whether group's committed offset of tp was
// written after position pos (O6).
func (s *Store) committedAfter(group string, tp TopicPartition, pos int64) (bool, error) {
	v, closer, err := s.db.Get(offsetKey(group, tp))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer closer.Close()
	return commitPosition(v) > pos, nil
}

// endGroup adds to b the moves (commit) or deletes (abort) of txnID's
// pending offsets in group.
func (s *Store) endGroup(b *pebble.Batch, group, txnID string, commit bool) error {
	prefix := pendingTxnPrefix(group, txnID)
	if commit {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		if err != nil {
			return err
		}
		for it.First(); it.Valid(); it.Next() {
			_, _, tp, err := decodePendingKey(it.Key())
			if err != nil {
				it.Close()
				return err
			}
			newer, err := s.committedAfter(group, tp, commitPosition(it.Value()))
			if err != nil {
				it.Close()
				return err
			}
			if newer {
				continue // O6: a later commit of the partition stays
			}
			if err := b.Set(offsetKey(group, tp), append([]byte(nil), it.Value()...), nil); err != nil {
				it.Close()
				return err
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return err
		}
	}
	return b.DeleteRange(prefix, prefixEnd(prefix), nil)
}

// PendingPartitions returns the partitions of group that have a pending
// transactional offset, of any transaction (O7: OffsetFetch with
// require_stable answers UNSTABLE_OFFSET_COMMIT for them).
func (s *Store) PendingPartitions(group string) (map[TopicPartition]bool, error) {
	return read(s, func() (map[TopicPartition]bool, error) {
		out := map[TopicPartition]bool{}
		err := eachPrefix(s.db, pendingGroupPrefix(group), func(k, _ []byte) error {
			_, _, tp, err := decodePendingKey(k)
			out[tp] = true
			return err
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}

// HasPending reports whether group's partition tp has a pending
// transactional offset (O7).
func (s *Store) HasPending(group string, tp TopicPartition) (bool, error) {
	pending, err := s.PendingPartitions(group)
	return pending[tp], err
}

// Pending returns the pending offsets of transaction txnID in group,
// ordered by topic and partition (DescribeTransactions, tests).
func (s *Store) Pending(txnID, group string) ([]Commit, error) {
	return read(s, func() ([]Commit, error) {
		return scanPrefix(s.db, pendingTxnPrefix(group, txnID), func(k, v []byte) (Commit, error) {
			_, _, tp, err := decodePendingKey(k)
			if err != nil {
				return Commit{}, err
			}
			return decodeCommit(tp, v)
		})
	})
}
