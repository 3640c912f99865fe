package kafka

// Plumbing between the wire layer and the transaction coordinator
// (kafka/txn): its lifecycle over the offsets store and the resolver. The
// handlers are 22_, 24_–26_, 28_, 65_ and 66_*.go, and Produce and
// OffsetFetch consult it (00_, 09_).

import (
	"errors"

	"github.com/kgateway/kgateway/kafka/txn"
	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
)

// errNoTxnCoordinator closes the connection of a transactional request
// sent to a server built without an offset store. Clients only get there
// without FindCoordinator (which answers COORDINATOR_NOT_AVAILABLE).
var errNoTxnCoordinator = errors.New("kafka: no transaction coordinator configured (Config.Offsets is nil)")

// newTxns creates the transaction coordinator over st. It recovers every
// transaction before it returns (completion at open), so nothing is served before the
// partitions of ongoing transactions are registered again and decided
// transactions are completed.
func (s *Server) newTxns(st *offsets.Store) (*txn.Coordinator, error) {
	tcfg := s.cfg.Txn
	if tcfg.Partitions == nil {
		tcfg.Partitions = s.res
	}
	if tcfg.Topics == nil {
		tcfg.Topics = topicChecker{s}
	}
	return txn.NewCoordinator(st, tcfg)
}

// AddPartitionImplicitly is the coordinator's implicit add (KIP-890
// implicit adds) for a partition led by another node, which asked through
// the cluster's relay (implicit adds across nodes); waiting lets the
// relay's answer give its slot up while the add waits for the id's
// completion (kafka/txn AddPartitionImplicitlyWaiting).
func (s *Server) AddPartitionImplicitly(id string, pid int64, epoch int16, topic string, partition int32, waiting func() bool) int16 {
	c := s.coords().txns
	if c == nil || !s.isCoordinator() {
		return kerr.NotCoordinator.Code
	}
	return c.AddPartitionImplicitlyWaiting(id, pid, epoch, topic, partition, waiting)
}

// txnCoordinator returns the transaction coordinator or the error that
// closes the connection.
func (s *Server) txnCoordinator() (*txn.Coordinator, error) {
	c := s.coords().txns
	if c == nil {
		s.log.Warn("txn-request-without-coordinator")
		return nil, errNoTxnCoordinator
	}
	return c, nil
}
