package logdirs

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
)

// maxFutureDirName is the longest directory name Kafka gives a replica
// being moved: "<topic>-<partition>.<32 hex>-future" must fit in 255
// bytes, or the move is INVALID_TOPIC_EXCEPTION ("The topic name is too
// long", KAFKA-4893).
const maxFutureDirName = 255

// futureDirName is the length of that name for topic-partition.
func futureDirName(topic string, partition int32) int {
	return len(topic) + 1 + len(strconv.Itoa(int(partition))) + 1 + 32 + len("-future")
}

// Hosting says what the node knows of a partition: whether its topic and
// partition exist, and whether this node holds its replica.
type Hosting struct {
	Exists bool
	Local  bool
}

// Move answers a request to move topic-partition's replica to dir, on a
// node whose only log dir is logDir, with Kafka's error codes in Kafka's
// order (ReplicaManager.alterReplicaLogDirs): a name too long for the
// future replica's directory; a dir that is not the log dir,
// LOG_DIR_NOT_FOUND (Kafka compares absolute paths as strings: a relative
// or differently spelled path is not found); a partition that does not
// exist, UNKNOWN_TOPIC_OR_PARTITION; one whose replica is not on this
// node, REPLICA_NOT_AVAILABLE. Otherwise the replica is already in the
// log dir, the only one: nothing to move, NONE.
func Move(logDir, dir, topic string, partition int32, h Hosting) int16 {
	switch {
	case futureDirName(topic, partition) > maxFutureDirName:
		return kerr.InvalidTopicException.Code
	case logDir == "" || dir != logDir:
		return kerr.LogDirNotFound.Code
	case !h.Exists:
		return kerr.UnknownTopicOrPartition.Code
	case !h.Local:
		return kerr.ReplicaNotAvailable.Code
	}
	return 0
}
