package kafka

// OffsetForLeaderEpoch (key 23), versions 0–4: where a leader epoch ends
// (kafka/logoffsets). One leader epoch, 0, on a single node; in cluster
// mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check) the partition's ownership epoch.

import (
	"github.com/kgateway/kgateway/kafka/logoffsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaderEpoch is the only leader epoch: this broker has always led.
const leaderEpoch = 0

// noLeaderEpoch is the current leader epoch of a client that knows none.
const noLeaderEpoch = logoffsets.NoEpoch

// leaderEpochError checks a client's current leader epoch against ours,
// as Kafka's Partition.checkCurrentLeaderEpoch does: an older epoch is
// FENCED_LEADER_EPOCH (the client's metadata is stale), a newer one
// UNKNOWN_LEADER_EPOCH (the client knows of a leader we do not); -1 is
// no epoch and is not checked. OffsetForLeaderEpoch v2+ and Fetch v9+
// (for epochs >= 0, as Kafka reads a negative one as absent) check it.
func leaderEpochError(current int32) error {
	return epochError(current, leaderEpoch)
}

// epochError is leaderEpochError against the partition's epoch, which in
// cluster mode is its ownership's fencing epoch (the leader epoch check).
func epochError(current, epoch int32) error {
	switch {
	case current == noLeaderEpoch:
		return nil
	case current < epoch:
		return kerr.FencedLeaderEpoch
	case current > epoch:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

func handleOffsetForLeaderEpoch(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	return logoffsets.EpochEnds(offsetLog{s}, req.(*kmsg.OffsetForLeaderEpochRequest)), nil
}

// epochEndRouteError checks the client's current epoch: against the one
// epoch 0 on a single node, against the partition's epoch and leader in
// cluster mode (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check).
func (s *Server) epochEndRouteError(topic string, partition, current int32) error {
	if s.cfg.Cluster != nil {
		return s.routeError(topic, partition, current)
	}
	return leaderEpochError(current)
}

// offsetLog is the Server's partitions as kafka/logoffsets reads them.
type offsetLog struct{ s *Server }

func (l offsetLog) Exists(topic string, partition int32) error {
	_, err := l.s.partitionOf(topic, partition, false)
	return err
}

func (l offsetLog) Routed(topic string, partition, current int32) error {
	return l.s.routeError(topic, partition, current)
}

func (l offsetLog) EpochRouted(topic string, partition, current int32) error {
	return l.s.epochEndRouteError(topic, partition, current)
}

func (l offsetLog) Epoch(topic string, partition int32) int32 {
	return l.s.currentEpochOf(topic, partition)
}

func (l offsetLog) Bounds(topic string, partition int32) (int64, int64, int64, error) {
	logStart, hwm, lso, err := l.s.bounds(topic, partition)
	return int64(logStart), int64(hwm), int64(lso), err
}

func (l offsetLog) ListOffset(topic string, partition int32, ts int64) (int64, int64, error) {
	off, t, err := l.s.listOffsetOf(topic, partition, ts)
	return int64(off), t, err
}

func (l offsetLog) ErrorCode(err error) int16 { return errCode(err) }
