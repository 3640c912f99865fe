package topicconfig

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/ledger"
)

// TestValueFallsBackToBrokerThenDefault: a config not set on the topic
// takes the broker setting it names, else Kafka's default.
func TestValueFallsBackToBrokerThenDefault(t *testing.T) {
	broker := Broker{"log.retention.ms": "5000"}
	if v := Value(nil, broker, "retention.ms"); v != "5000" {
		t.Fatalf("retention.ms from broker = %q", v)
	}
	if v := Value(map[string]string{"retention.ms": "7"}, broker, "retention.ms"); v != "7" {
		t.Fatalf("retention.ms set = %q", v)
	}
	if v := Value(nil, nil, "retention.ms"); v != "604800000" {
		t.Fatalf("retention.ms default = %q", v)
	}
}

// TestValidateRelations: min.compaction.lag.ms may not exceed
// max.compaction.lag.ms, and a compacted view needs the delete policy.
func TestValidateRelations(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "min.compaction.lag.ms"},
		{map[string]string{CompactedView: "true", "cleanup.policy": "compact"}, "cleanup.policy=delete"},
		{map[string]string{"retention.ms": "-2"}, "must be at least -1"},
		{map[string]string{"no.such": "1"}, "unknown topic config"},
	} {
		err := Validate(tc.set, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want ErrInvalid mentioning %q", tc.set, err, tc.want)
		}
	}
	if err := Validate(map[string]string{CompactedView: "true", "cleanup.policy": "delete"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestApplyListOps: APPEND and SUBTRACT edit list configs from their
// effective value and are refused on others.
func TestApplyListOps(t *testing.T) {
	out, err := Apply(nil, nil, []Op{{Name: "cleanup.policy", Op: OpAppend, Value: "compact"}})
	if err != nil || out["cleanup.policy"] != "delete,compact" {
		t.Fatalf("append = %v, %v", out, err)
	}
	out, err = Apply(out, nil, []Op{{Name: "cleanup.policy", Op: OpSubtract, Value: "delete"}, {Name: "retention.ms", Op: OpDelete}})
	if err != nil || out["cleanup.policy"] != "compact" {
		t.Fatalf("subtract = %v, %v", out, err)
	}
	if _, err := Apply(nil, nil, []Op{{Name: "retention.ms", Op: OpAppend, Value: "1"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("append to a long = %v", err)
	}
}

// TestResolve: a compacted topic's segment age is capped by
// max.compaction.lag.ms, -2 local retention takes retention.*, and a
// codec other than producer asks for recompression.
func TestResolve(t *testing.T) {
	base := ledger.Config{SegmentBytes: 1 << 20}
	s := Resolve(map[string]string{"cleanup.policy": "compact", "max.compaction.lag.ms": "1000", "retention.bytes": "99", "compression.type": "zstd"}, nil, base)
	if !s.Clean.Compact || s.Clean.Delete || s.Ledger.SegmentAge != time.Second {
		t.Fatalf("clean %+v age %v", s.Clean, s.Ledger.SegmentAge)
	}
	if s.Local.RetentionBytes != 99 || s.Ledger.SegmentBytes != DefaultSegmentBytes {
		t.Fatalf("local %+v segment bytes %d", s.Local, s.Ledger.SegmentBytes)
	}
	if !s.Recompress {
		t.Fatal("zstd should recompress")
	}
	d := Resolve(nil, nil, base)
	if d.Recompress || d.Clean.MaxLagMs != math.MaxInt64 || d.Ledger.SegmentAge != DefaultSegmentAge {
		t.Fatalf("defaults: %+v", d)
	}
}
