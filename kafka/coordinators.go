package kafka

// The coordinators over the offsets store, and SwapOffsets, which replaces
// the store and its coordinators while the server runs: a node of a
// cluster that becomes the group coordinator swaps in the store it
// restored from etcd (cluster/coord).

import (
	"github.com/kgateway/kgateway/kafka/group"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// coordinators are the coordinators over one offsets store; all nil
// without one. A request loads them once (Server.coords) and finishes on
// what it loaded, even if they are swapped meanwhile.
type coordinators struct {
	store  *offsets.Store
	groups *group.Coordinator
	share  *share.Coordinator
	txns   *txn.Coordinator
}

// coords returns the current coordinators.
func (s *Server) coords() *coordinators { return s.coord.Load() }

// newCoordinators builds the group and share coordinators over st, and
// the transaction coordinator if withTxns; none if st is nil.
func (s *Server) newCoordinators(st *offsets.Store, withTxns bool) (*coordinators, error) {
	c := &coordinators{store: st}
	if st == nil {
		return c, s.groupBound.Load(nil)
	}
	if err := s.groupBound.Load(st); err != nil { // tenant.go: durable group owners
		return nil, err
	}
	var err error
	if c.groups, err = s.newGroups(st); err != nil {
		return nil, err
	}
	if s.cfg.Cluster == nil || s.shareInCluster() { // No share groups without States, share groups in cluster mode: share groups need a durable home in cluster mode
		if c.share, err = s.newShare(st); err != nil {
			c.stop()
			return nil, err
		}
	}
	if withTxns {
		if c.txns, err = s.newTxns(st); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

// stop stops the coordinators' timers and background loops and wakes
// JoinGroup/SyncGroup requests blocked in a rebalance (they fail), so
// neither a shutdown nor a swap waits out rebalance timeouts. The store
// stays open: its owner closes it.
func (c *coordinators) stop() {
	if c.groups != nil {
		c.groups.Close()
	}
	if c.txns != nil {
		c.txns.Close()
	}
}

// SwapOffsets makes st the offsets store: it builds the group and share
// coordinators over st (and the transaction coordinator if the server has
// one now), makes them the ones every new request uses, stops the old ones
// (their timers; requests blocked in their rebalances fail) and returns
// the old store for the caller to close. A request that loaded the old
// coordinators before the swap finishes on them: if the caller has
// closed the old store by then it fails, and acknowledges nothing. In a
// cluster, a write of the old coordinator after the new one's ownership
// was acquired is fenced in etcd (the fenced store mirror, restore at one revision). st nil removes
// the coordinators (group requests get what a server without
// Config.Offsets answers).
//
// If the coordinators cannot be built over st (a store that cannot be
// read), the server is left without coordinators, as for nil, and the
// error is logged. After Close, SwapOffsets installs nothing and returns
// st.
func (s *Server) SwapOffsets(st *offsets.Store) *offsets.Store {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	withTxns := s.coords().txns != nil
	c, err := s.newCoordinators(st, withTxns)
	if err != nil {
		s.log.Error("offsets-swap-failed", zap.Error(err))
		c = &coordinators{}
	}
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		c.stop()
		return st
	}
	old := s.coord.Swap(c)
	s.mu.Unlock()
	old.stop()
	return old.store
}
