package logoffsets

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memLog is one partition, t-0, with log start 2, high watermark 10 and
// last stable offset 6, at epoch 3; a timestamp finds offset ts/100.
type memLog struct{}

var errUnknown = errors.New("unknown partition")

func (memLog) Exists(topic string, p int32) error {
	if topic != "t" || p != 0 {
		return errUnknown
	}
	return nil
}
func (memLog) Routed(string, int32, int32) error { return nil }
func (memLog) EpochRouted(_ string, _ int32, current int32) error {
	if current > 3 {
		return kerr.UnknownLeaderEpoch
	}
	return nil
}
func (memLog) Epoch(string, int32) int32                         { return 3 }
func (memLog) Bounds(string, int32) (int64, int64, int64, error) { return 2, 10, 6, nil }
func (memLog) ListOffset(_ string, _ int32, ts int64) (int64, int64, error) {
	switch ts {
	case Latest:
		return 10, -1, nil
	case Earliest:
		return 2, -1, nil
	}
	return ts / 100, ts, nil
}
func (memLog) ErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownTopicOrPartition.Code
}

func listOne(version int16, isolation int8, topic string, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	r := kmsg.NewPtrListOffsetsRequest()
	r.Version, r.IsolationLevel = version, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return List(memLog{}, r).Topics[0].Partitions[0]
}

// TestList checks read_committed (latest is the last stable offset, a
// lookup at or past it finds nothing), a special timestamp newer than
// the version, and an unknown partition.
func TestList(t *testing.T) {
	if p := listOne(2, 0, "t", Latest); p.Offset != 10 || p.LeaderEpoch != 3 {
		t.Fatalf("latest read_uncommitted: %+v", p)
	}
	if p := listOne(2, readCommitted, "t", Latest); p.Offset != 6 {
		t.Fatalf("latest read_committed: offset %d, want 6", p.Offset)
	}
	if p := listOne(2, readCommitted, "t", 800); p.Offset != -1 || p.LeaderEpoch != -1 {
		t.Fatalf("lookup past the LSO under read_committed: %+v", p)
	}
	if p := listOne(2, readCommitted, "t", 500); p.Offset != 5 || p.Timestamp != 500 {
		t.Fatalf("lookup below the LSO: %+v", p)
	}
	if p := listOne(6, 0, "t", -3); p.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("max timestamp at v6: code %d", p.ErrorCode)
	}
	if p := listOne(6, 0, "u", Latest); p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.LeaderEpoch != -1 {
		t.Fatalf("unknown partition: %+v", p)
	}
}

// TestEpochEnds answers epochs up to the current one with the high
// watermark, a later one with -1, and checks the current epoch from v2.
func TestEpochEnds(t *testing.T) {
	one := func(version int16, epoch, current int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		r := kmsg.NewPtrOffsetForLeaderEpochRequest()
		r.Version = version
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.LeaderEpoch, rp.CurrentLeaderEpoch = epoch, current
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return EpochEnds(memLog{}, r).Topics[0].Partitions[0]
	}
	if p := one(3, 2, 3); p.ErrorCode != 0 || p.LeaderEpoch != 3 || p.EndOffset != 10 {
		t.Fatalf("epoch 2: %+v", p)
	}
	if p := one(3, 4, 3); p.LeaderEpoch != -1 || p.EndOffset != -1 {
		t.Fatalf("epoch 4: %+v", p)
	}
	if p := one(3, 3, 4); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("current epoch 4 at v3: code %d", p.ErrorCode)
	}
	if p := one(1, 3, 4); p.ErrorCode != 0 {
		t.Fatalf("current epoch at v1 (not carried): code %d", p.ErrorCode)
	}
}
