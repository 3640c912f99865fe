package resolver

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/storage"
)

// Durable transaction state (X6, X7): its keys and encoding are package
// txnstate's; a producer-state checkpoint (checkpoint.go) writes them in
// the same atomic ApplyMeta.

// loadTxns reads a log's persisted open transactions and aborted index.
func (st *stateStore) loadTxns(log storage.LogID) (map[int64]*txnstate.Entry, []txnstate.Aborted, error) {
	open, aborted, err := txnstate.Read(st.store, log)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return open, aborted, nil
}

// txnKeys lists the transaction keys of log (to delete them with it).
func (st *stateStore) txnKeys(log storage.LogID) ([]storage.MetaOp, error) {
	return txnstate.Keys(st.store, log)
}
