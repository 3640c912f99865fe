package logoffsets

// NoEpoch is the current leader epoch of a client that knows none: it is
// not checked.
const NoEpoch = -1

// Log is the partitions as kafka/ serves them (internal topics included,
// cluster routing applied). Offsets are log offsets.
type Log interface {
	// Exists is nil when the partition exists, else why not.
	Exists(topic string, partition int32) error
	// Routed is ListOffsets' routing check (NOT_LEADER_OR_FOLLOWER routing, the leader epoch check): nil on a single
	// node, else the client's current epoch against the partition's, and
	// whether this node leads it.
	Routed(topic string, partition, current int32) error
	// EpochRouted is OffsetForLeaderEpoch's: the current epoch is checked
	// on a single node too (against epoch 0).
	EpochRouted(topic string, partition, current int32) error
	// Epoch is the partition's leader epoch (NoEpoch while it has no
	// leader).
	Epoch(topic string, partition int32) int32
	// Bounds are the log start, high watermark and last stable offset.
	Bounds(topic string, partition int32) (logStart, hwm, lso int64, err error)
	// ListOffset answers a ListOffsets timestamp: offset and timestamp,
	// -1 and -1 when no record matches.
	ListOffset(topic string, partition int32, ts int64) (offset, timestamp int64, err error)
	// ErrorCode is the Kafka error code of an error the methods above
	// return.
	ErrorCode(err error) int16
}
