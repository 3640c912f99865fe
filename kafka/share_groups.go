package kafka

// Plumbing between the wire layer and the share-group coordinator
// (kafka/share): its lifecycle, the log it reads through (the resolver's
// cursorless Fetch, R1), and the group-id namespace it shares with the
// classic coordinator (one group-id namespace). The handlers are 76_–79_ and 90_–92_*.go.

import (
	"context"
	"time"

	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
)

// newShare creates the share coordinator over st.
func (s *Server) newShare(st *offsets.Store) (*share.Coordinator, error) {
	scfg := s.cfg.Share
	scfg.Consumer = share.ConsumerConfig(s.cfg.Group.ConsumerTimeouts())
	if s.cfg.Cluster == nil { // dead-letter queues: a single node's (kafka/share dlq.go)
		scfg.DeadLetters, scfg.DLQEnabled = shareLog{s}, func() bool { return s.features != nil && s.features.Level(shareVersionFeature) >= 2 }
	}
	return share.NewCoordinator(st, shareLog{s}, classicNamespace{s}, scfg)
}

// shareCoordinator returns the share coordinator or the error that closes
// the connection.
func (s *Server) shareCoordinator() (*share.Coordinator, error) {
	c := s.coords().share
	if c == nil {
		return nil, errNoCoordinator
	}
	return c, nil
}

// isShareGroup reports whether id is a share group's (one group-id namespace).
func (s *Server) isShareGroup(id string) bool {
	c := s.coords().share
	return c != nil && c.IsShareGroup(id)
}

// classicNamespace answers for the classic (and consumer) coordinator
// whether it holds a group id.
type classicNamespace struct{ s *Server }

func (n classicNamespace) OtherGroup(id string) bool {
	g := n.s.coords().groups
	return g != nil && g.HasGroup(id)
}

// shareLog is the share coordinator's view of the partitions: only reads
// (R1) and bounds, through the resolver.
type shareLog struct{ s *Server }

// Internal topics are among the partitions (internal_topics.go): a share
// group subscribing to one by name is assigned its empty partitions.
func (l shareLog) Partitions(topic string) (int32, bool) {
	if resolver.IsInternalTopic(topic) {
		return internalPartitions, true
	}
	return l.s.res.Partitions(topic)
}

func (l shareLog) TopicID(topic string) ([16]byte, bool) {
	if id, ok := l.s.res.InternalTopicID(topic); ok {
		return [16]byte(id), true
	}
	t, ok := l.s.res.Topic(topic)
	return [16]byte(t.ID), ok
}

func (l shareLog) TopicName(id [16]byte) (string, bool) {
	name, _, ok := l.s.topicByID(id)
	return name, ok
}

// In cluster mode a partition another node leads is NOT_LEADER_OR_FOLLOWER
// (share reads at the leaders): its local copy is not this node's to read.
func (l shareLog) Bounds(topic string, partition int32) (int64, int64, error) {
	if _, err := l.s.partitionOf(topic, partition, false); err != nil {
		return -1, -1, err
	}
	if err := l.s.routeError(topic, partition, noLeaderEpoch); err != nil {
		return -1, -1, err
	}
	ls, hwm, _, err := l.s.bounds(topic, partition)
	return int64(ls), int64(hwm), err
}

// Read is the resolver's ordinary cursorless read (R1): it writes nothing.
// A ShareFetch's reads are leased to its response (kafka/fetchwire).
func (l shareLog) Read(topic string, partition int32, offset int64, maxBytes int, into share.Wire) ([][]byte, error) {
	res, err := l.s.readPartition(topic, partition, resolver.Offset(offset), maxBytes, true, resolver.ReadUncommitted, fetchwire.LeaseOf(into))
	return res.Batches, err
}

// ReadCommitted is Read at read_committed (the read_committed bound): batches below
// the last stable offset and the aborted transactions among them.
func (l shareLog) ReadCommitted(topic string, partition int32, offset int64, maxBytes int, into share.Wire) ([][]byte, int64, []share.AbortedTxn, error) {
	res, err := l.s.readPartition(topic, partition, resolver.Offset(offset), maxBytes, true, resolver.ReadCommitted, fetchwire.LeaseOf(into))
	aborted := make([]share.AbortedTxn, len(res.Aborted))
	for i, a := range res.Aborted {
		aborted[i] = share.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: int64(a.FirstOffset)}
	}
	return res.Batches, int64(res.LastStable), aborted, err
}

// Wait waits for an append to parts, a release or expiry on one of them
// (wake), the time until, the connection to die or the server to close
// (share.WaitAny).
func (l shareLog) Wait(ctx context.Context, parts []offsets.TopicPartition, wake []<-chan struct{}, until time.Time) bool {
	w := l.s.res.NewWaiter()
	defer w.Close()
	for _, tp := range parts {
		_ = l.s.res.WatchWith(w, tp.Topic, tp.Partition)
	}
	return share.WaitAny(ctx.Done(), l.s.closing, w.C, until, wake)
}

func (l shareLog) Code(err error) int16 { return errCode(err) }

func (l shareLog) MaxBytes() int { return int(l.s.cfg.FetchMaxBytes) }

// TopicConfig and Produce are share.DeadLetterLog's: set configs, durable produce.
func (l shareLog) TopicConfig(topic, name string) (string, bool) {
	t, ok := l.s.res.Topic(topic)
	return t.Configs[name], ok
}

func (l shareLog) Produce(topic string, partition int32, batch []byte) error {
	_, err := l.s.res.Produce(topic, partition, batch)
	return err
}

func (l shareLog) Decompress(codec int8, sec []byte) ([]byte, error) {
	return resolver.Decompress(resolver.Codec(codec), sec, int64(l.s.cfg.FetchMaxBytes))
}
