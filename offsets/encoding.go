package offsets

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Keyspace (this pebble instance holds nothing else, O3):
//
//	'g' group                                        -> group metadata
//	'o' uvarint(len g) g uvarint(len t) t be32(part) -> commit
//
// Length prefixes make every group's (and every topic's) key range a
// contiguous, prefix-free range, whatever bytes the names contain.
const (
	metaTag   byte = 'g'
	offsetTag byte = 'o'

	recordVersion byte = 1
)

func metaKey(group string) []byte {
	return append([]byte{metaTag}, group...)
}

func groupOffsetPrefix(group string) []byte {
	k := []byte{offsetTag}
	k = binary.AppendUvarint(k, uint64(len(group)))
	return append(k, group...)
}

func offsetKey(group string, tp TopicPartition) []byte {
	k := groupOffsetPrefix(group)
	k = binary.AppendUvarint(k, uint64(len(tp.Topic)))
	k = append(k, tp.Topic...)
	return binary.BigEndian.AppendUint32(k, uint32(tp.Partition))
}

// prefixEnd is the smallest key greater than every key starting with prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // all 0xff: no upper bound
}

// lenString reads a uvarint length and that many bytes.
func lenString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

func decodeOffsetKey(k []byte) (string, TopicPartition, error) {
	if len(k) == 0 || k[0] != offsetTag {
		return "", TopicPartition{}, fmt.Errorf("%w: offset key %x", ErrCorrupt, k)
	}
	group, rest, ok := lenString(k[1:])
	if !ok {
		return "", TopicPartition{}, fmt.Errorf("%w: offset key %x", ErrCorrupt, k)
	}
	topic, rest, ok := lenString(rest)
	if !ok || len(rest) != 4 {
		return "", TopicPartition{}, fmt.Errorf("%w: offset key %x", ErrCorrupt, k)
	}
	return group, TopicPartition{Topic: topic, Partition: int32(binary.BigEndian.Uint32(rest))}, nil
}

func appendLenString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encodeCommit encodes c written at position pos (O6), which follows the
// metadata; a commit written before positions existed has none (0).
func encodeCommit(c Commit, pos int64) []byte {
	b := []byte{recordVersion}
	b = binary.AppendVarint(b, int64(c.Offset))
	b = binary.AppendVarint(b, int64(c.LeaderEpoch))
	b = binary.AppendVarint(b, c.CommitTime.UnixMilli())
	b = appendLenString(b, c.Metadata)
	return binary.AppendVarint(b, pos)
}

// commitPosition is the write position of an encoded commit (O6): 0 for
// one written before positions existed, or one that does not decode.
func commitPosition(v []byte) int64 {
	if len(v) == 0 || v[0] != recordVersion {
		return 0
	}
	_, rest, ok := varints(v[1:], 3)
	if !ok {
		return 0
	}
	if _, rest, ok = lenString(rest); !ok || len(rest) == 0 {
		return 0
	}
	pos, n := binary.Varint(rest)
	if n <= 0 {
		return 0
	}
	return pos
}

// varints reads n varints in order.
func varints(b []byte, n int) ([]int64, []byte, bool) {
	out := make([]int64, n)
	for i := range out {
		v, k := binary.Varint(b)
		if k <= 0 {
			return nil, nil, false
		}
		out[i], b = v, b[k:]
	}
	return out, b, true
}

func decodeCommit(tp TopicPartition, v []byte) (Commit, error) {
	bad := fmt.Errorf("%w: commit %s", ErrCorrupt, tp)
	if len(v) == 0 || v[0] != recordVersion {
		return Commit{}, bad
	}
	nums, rest, ok := varints(v[1:], 3)
	if !ok {
		return Commit{}, bad
	}
	md, rest, ok := lenString(rest)
	if ok && len(rest) > 0 { // the write position (O6)
		_, n := binary.Varint(rest)
		ok, rest = n > 0, rest[max(n, 0):]
	}
	if !ok || len(rest) != 0 {
		return Commit{}, bad
	}
	return Commit{
		TopicPartition: tp,
		Offset:         Offset(nums[0]),
		LeaderEpoch:    int32(nums[1]),
		CommitTime:     time.UnixMilli(nums[2]),
		Metadata:       md,
	}, nil
}

func encodeGroup(g Group) []byte {
	b := []byte{recordVersion}
	b = appendLenString(b, g.ProtocolType)
	b = appendLenString(b, g.Protocol)
	b = binary.AppendVarint(b, int64(g.Generation))
	b = append(b, byte(g.State))
	return binary.AppendVarint(b, g.StateTime.UnixMilli())
}

func decodeGroup(id string, v []byte) (Group, error) {
	bad := fmt.Errorf("%w: group %q", ErrCorrupt, id)
	if len(v) == 0 || v[0] != recordVersion {
		return Group{}, bad
	}
	ptype, rest, ok := lenString(v[1:])
	if !ok {
		return Group{}, bad
	}
	proto, rest, ok := lenString(rest)
	if !ok {
		return Group{}, bad
	}
	gen, rest, ok := varints(rest, 1)
	if !ok || len(rest) < 1 || rest[0] > byte(GroupActive) {
		return Group{}, bad
	}
	state := GroupState(rest[0])
	ts, rest, ok := varints(rest[1:], 1)
	if !ok || len(rest) != 0 {
		return Group{}, bad
	}
	return Group{
		ID: id, ProtocolType: ptype, Protocol: proto, Generation: int32(gen[0]),
		State: state, StateTime: time.UnixMilli(ts[0]),
	}, nil
}
