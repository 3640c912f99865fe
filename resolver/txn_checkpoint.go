package resolver

import (
	"encoding/binary"
	"fmt"
	"maps"

	"github.com/kgateway/kgateway/storage"
)

// Durable transaction state (the aborted-transaction index, transaction recovery). A producer-state checkpoint
// (checkpoint.go) also writes, in the same atomic ApplyMeta and as of the
// same Covered offset:
//
//	resolver/txn-open/<log><pid>     an open transaction: epoch i16, first offset i64
//	resolver/aborted/<log><offset>   an aborted transaction, keyed by its
//	                                 ABORT marker's offset: pid i64, first offset i64
//
// only for what changed since the previous checkpoint (as incremental producer checkpoints). Entries
// after Covered are rebuilt on Open by replaying the batch headers and
// markers, so nothing depends on when a checkpoint ran. Registrations
// (AddTxnPartition) without a batch are not persisted: the coordinator
// registers again after a restart.

var (
	prefixTxnOpen = []byte("resolver/txn-open/")
	prefixAborted = []byte("resolver/aborted/")
)

func txnOpenKey(log storage.LogID, pid int64) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefixTxnOpen, uint64(log)), uint64(pid))
}

func abortedKey(log storage.LogID, last Offset) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefixAborted, uint64(log)), uint64(last))
}

// txnDirty is what one checkpoint takes from a txnSet.
type txnDirty struct {
	open    map[int64]struct{}
	aborted map[Offset]*abortedTxn
}

// takeDirty returns the checkpoint's ops for the changed transaction state
// and starts new dirty sets; keepDirty gives them back after a failure.
func (s *txnSet) takeDirty(log storage.LogID) ([]storage.MetaOp, txnDirty) {
	d := txnDirty{open: s.dirtyOpen, aborted: s.dirtyAborted}
	s.dirtyOpen, s.dirtyAborted = map[int64]struct{}{}, map[Offset]*abortedTxn{}
	ops := make([]storage.MetaOp, 0, len(d.open)+len(d.aborted))
	be := binary.BigEndian
	for pid := range d.open {
		op := storage.MetaOp{Key: txnOpenKey(log, pid), Delete: true}
		if e := s.m[pid]; e != nil && e.first >= 0 {
			op = storage.MetaOp{Key: op.Key, Value: be.AppendUint64(be.AppendUint16(nil, uint16(e.epoch)), uint64(e.first))}
		}
		ops = append(ops, op)
	}
	for last, a := range d.aborted {
		op := storage.MetaOp{Key: abortedKey(log, last), Delete: true}
		if a != nil {
			op = storage.MetaOp{Key: op.Key, Value: be.AppendUint64(be.AppendUint64(nil, uint64(a.pid)), uint64(a.first))}
		}
		ops = append(ops, op)
	}
	return ops, d
}

func (s *txnSet) keepDirty(d txnDirty) {
	for pid := range d.open {
		s.dirtyOpen[pid] = struct{}{}
	}
	for last, a := range d.aborted {
		if _, newer := s.dirtyAborted[last]; !newer {
			s.dirtyAborted[last] = a
		}
	}
}

// loadTxns reads a log's persisted open transactions and aborted index
// (the latter in marker-offset order: keys are big-endian).
func (st *stateStore) loadTxns(log storage.LogID) (map[int64]*txnEntry, []abortedTxn, error) {
	be := binary.BigEndian
	open := map[int64]*txnEntry{}
	err := st.store.ScanMeta(idKey(prefixTxnOpen, uint64(log)), func(k, v []byte) error {
		if len(k) < 8 || len(v) != 10 {
			return fmt.Errorf("open transaction %x = %x", k, v)
		}
		open[int64(be.Uint64(k[len(k)-8:]))] = &txnEntry{epoch: int16(be.Uint16(v)), first: Offset(be.Uint64(v[2:]))}
		return nil
	})
	if err != nil {
		return nil, nil, storageErr(fmt.Sprintf("read open transactions of %s", log), err)
	}
	var aborted []abortedTxn
	err = st.store.ScanMeta(idKey(prefixAborted, uint64(log)), func(k, v []byte) error {
		if len(k) < 8 || len(v) != 16 {
			return fmt.Errorf("aborted transaction %x = %x", k, v)
		}
		aborted = append(aborted, abortedTxn{pid: int64(be.Uint64(v)), first: Offset(be.Uint64(v[8:])), last: Offset(be.Uint64(k[len(k)-8:]))})
		return nil
	})
	if err != nil {
		return nil, nil, storageErr(fmt.Sprintf("read aborted transactions of %s", log), err)
	}
	return open, aborted, nil
}

// txnKeys lists the transaction keys of log (to delete them with it).
func (st *stateStore) txnKeys(log storage.LogID) ([]storage.MetaOp, error) {
	var ops []storage.MetaOp
	for _, prefix := range [][]byte{prefixTxnOpen, prefixAborted} {
		err := st.store.ScanMeta(idKey(prefix, uint64(log)), func(k, _ []byte) error {
			ops = append(ops, storage.MetaOp{Key: append([]byte(nil), k...), Delete: true})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// loadTxnState installs the persisted transaction state of a partition
// being recovered: the open transactions into set, the aborted entries
// still at or past the log start into the returned index, and those below
// it (trimmed while no checkpoint ran) as deletions for the next
// checkpoint.
func loadTxnState(set *txnSet, open map[int64]*txnEntry, aborted []abortedTxn, start Offset) []abortedTxn {
	maps.Copy(set.m, open)
	kept := aborted[:0]
	for _, a := range aborted {
		if a.last < start {
			set.dirtyAborted[a.last] = nil
			continue
		}
		kept = append(kept, a)
	}
	return kept
}
