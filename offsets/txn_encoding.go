package offsets

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Transaction keys (beside the group keys of encoding.go):
//
//	'x' txnID                                              -> transaction state
//	'p' uvarint(len g) g uvarint(len x) x uvarint(len t) t be32(part)
//	                                                       -> pending offset
//
// A pending offset is keyed by group first, so the partitions of a group
// with pending offsets are one prefix scan (O7), and then by transaction,
// so one transaction's offsets in a group are one range (O6).
const (
	txnTag     byte = 'x'
	pendingTag byte = 'p'
)

// TxnState is a transaction's state; the names and meanings are Kafka's
// (kafka/txn drives the transitions).
type TxnState uint8

const (
	TxnEmpty TxnState = iota
	TxnOngoing
	TxnPrepareCommit
	TxnPrepareAbort
	TxnCompleteCommit
	TxnCompleteAbort
	TxnDead
	TxnPrepareEpochFence
	txnStates
)

var txnStateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
	"CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s TxnState) String() string {
	if s < txnStates {
		return txnStateNames[s]
	}
	return fmt.Sprintf("TxnState(%d)", uint8(s))
}

// Txn is the durable state of one transactional id (O4).
type Txn struct {
	ID             string
	ProducerID     int64
	LastProducerID int64 // the id before an epoch-exhaustion rotation, or -1
	Epoch          int16
	LastEpoch      int16 // the epoch before the last bump (KIP-360 retries), or -1
	State          TxnState
	Timeout        time.Duration    // transaction.timeout.ms of the producer
	Partitions     []TopicPartition // of the ongoing (or preparing) transaction
	Groups         []string         // groups with TxnOffsetCommit offsets in it
	StartTime      time.Time        // when the transaction became Ongoing
	UpdateTime     time.Time        // the last transition
	// Version is the transaction version the current (or last)
	// transaction runs at: 0 or 1 (KIP-98) or 2 (KIP-890 part 2).
	Version int8
	// NextProducerID is, in a version-2 PrepareCommit or PrepareAbort,
	// the producer id the client continues with because the bumped epoch
	// is exhausted; -1 otherwise.
	NextProducerID int64
}

func txnKey(id string) []byte { return append([]byte{txnTag}, id...) }

func pendingGroupPrefix(group string) []byte {
	return appendLenString([]byte{pendingTag}, group)
}

func pendingTxnPrefix(group, txnID string) []byte {
	return appendLenString(pendingGroupPrefix(group), txnID)
}

func pendingKey(group, txnID string, tp TopicPartition) []byte {
	k := appendLenString(pendingTxnPrefix(group, txnID), tp.Topic)
	return binary.BigEndian.AppendUint32(k, uint32(tp.Partition))
}

func decodePendingKey(k []byte) (group, txnID string, tp TopicPartition, err error) {
	bad := fmt.Errorf("%w: pending key %x", ErrCorrupt, k)
	if len(k) == 0 || k[0] != pendingTag {
		return "", "", tp, bad
	}
	group, rest, ok := lenString(k[1:])
	if !ok {
		return "", "", tp, bad
	}
	txnID, rest, ok = lenString(rest)
	if !ok {
		return "", "", tp, bad
	}
	topic, rest, ok := lenString(rest)
	if !ok || len(rest) != 4 {
		return "", "", tp, bad
	}
	return group, txnID, TopicPartition{Topic: topic, Partition: int32(binary.BigEndian.Uint32(rest))}, nil
}

func encodeTxn(t Txn) []byte {
	b := []byte{recordVersion, byte(t.State)}
	for _, v := range []int64{t.ProducerID, t.LastProducerID, int64(t.Epoch), int64(t.LastEpoch),
		t.Timeout.Milliseconds(), t.StartTime.UnixMilli(), t.UpdateTime.UnixMilli()} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Partitions)))
	for _, tp := range t.Partitions {
		b = appendLenString(b, tp.Topic)
		b = binary.AppendVarint(b, int64(tp.Partition))
	}
	b = binary.AppendUvarint(b, uint64(len(t.Groups)))
	for _, g := range t.Groups {
		b = appendLenString(b, g)
	}
	if t.Version >= 2 {
		// Optional trailer: records of version-1 transactions are encoded
		// as before, so older stores decode unchanged.
		b = append(b, byte(t.Version))
		b = binary.AppendVarint(b, t.NextProducerID)
	}
	return b
}

func decodeTxn(id string, v []byte) (Txn, error) {
	bad := fmt.Errorf("%w: transaction %q", ErrCorrupt, id)
	if len(v) < 2 || v[0] != recordVersion || TxnState(v[1]) >= txnStates {
		return Txn{}, bad
	}
	nums, rest, ok := varints(v[2:], 7)
	if !ok {
		return Txn{}, bad
	}
	t := Txn{ID: id, State: TxnState(v[1]), ProducerID: nums[0], LastProducerID: nums[1],
		Epoch: int16(nums[2]), LastEpoch: int16(nums[3]), Timeout: time.Duration(nums[4]) * time.Millisecond,
		StartTime: time.UnixMilli(nums[5]), UpdateTime: time.UnixMilli(nums[6]), NextProducerID: -1}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return Txn{}, bad
	}
	rest = rest[k:]
	for range n {
		topic, r, ok := lenString(rest)
		if !ok {
			return Txn{}, bad
		}
		p, k := binary.Varint(r)
		if k <= 0 {
			return Txn{}, bad
		}
		t.Partitions = append(t.Partitions, TopicPartition{Topic: topic, Partition: int32(p)})
		rest = r[k:]
	}
	n, k = binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return Txn{}, bad
	}
	rest = rest[k:]
	for range n {
		g, r, ok := lenString(rest)
		if !ok {
			return Txn{}, bad
		}
		t.Groups = append(t.Groups, g)
		rest = r
	}
	if len(rest) != 0 {
		if rest[0] < 2 {
			return Txn{}, bad
		}
		next, k := binary.Varint(rest[1:])
		if k <= 0 || len(rest) != 1+k {
			return Txn{}, bad
		}
		t.Version, t.NextProducerID = int8(rest[0]), next
	}
	return t, nil
}
