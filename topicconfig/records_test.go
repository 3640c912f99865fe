package topicconfig

import (
	"errors"
	"testing"

	"github.com/kgateway/kgateway/recordbatch"
)

// TestKafka44Names: the configs Kafka 4.0 removed are unknown (INVALID_CONFIG
// when set), and KIP-390's levels and max.decompressed.message.bytes are
// known, each validated over Kafka 4.4's range.
func TestKafka44Names(t *testing.T) {
	for _, name := range []string{"message.downconversion.enable", "message.timestamp.difference.max.ms"} {
		if Known(name) || !errors.Is(Check(map[string]string{name: "1"}), ErrInvalid) {
			t.Errorf("%s is still accepted", name)
		}
	}
	for name, vals := range map[string]struct{ ok, bad []string }{
		"compression.gzip.level":         {[]string{"-1", "1", "9"}, []string{"0", "10", "-2"}},
		"compression.lz4.level":          {[]string{"1", "9", "17"}, []string{"0", "18"}},
		"compression.zstd.level":         {[]string{"-131072", "0", "22"}, []string{"-131073", "23"}},
		"max.decompressed.message.bytes": {[]string{"1", "2147483639"}, []string{"0", "2147483640"}},
	} {
		for _, v := range vals.ok {
			if err := Check(map[string]string{name: v}); err != nil {
				t.Errorf("%s=%s refused: %v", name, v, err)
			}
		}
		for _, v := range vals.bad {
			if err := Check(map[string]string{name: v}); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s=%s accepted", name, v)
			}
		}
	}
	for name, want := range map[string]string{"compression.gzip.level": "-1", "compression.lz4.level": "9",
		"compression.zstd.level": "3", "max.decompressed.message.bytes": "2147483639", "message.timestamp.after.max.ms": "3600000"} {
		if v := Value(nil, nil, name); v != want {
			t.Errorf("%s default %s, want Kafka 4.4's %s", name, v, want)
		}
	}
}

// TestResolveLevel: the level of the recompression codec is resolved,
// from the broker's setting when the topic has none.
func TestResolveLevel(t *testing.T) {
	s := Resolve(map[string]string{"compression.type": "gzip", "compression.gzip.level": "1"}, nil, Resolve(nil, nil, Settings{}.Ledger).Ledger)
	if s.Level != 1 || s.Codec != recordbatch.CodecGzip {
		t.Fatalf("gzip level %d codec %v", s.Level, s.Codec)
	}
	s = Resolve(map[string]string{"compression.type": "zstd"}, Broker{"compression.zstd.level": "19"}, s.Ledger)
	if s.Level != 19 {
		t.Fatalf("zstd level %d, want the broker's 19", s.Level)
	}
}

// TestRecordRules: CreateTime records must lie within
// [now - before, now + after] (after is an hour by default), -1 is not
// checked, a LogAppendTime topic checks no record's timestamp; a batch
// whose producer set the LogAppendTime bit is refused on a LogAppendTime
// topic and checked at its max timestamp on a CreateTime topic;
// a compressed record above max.decompressed.message.bytes fails the
// batch.
func TestRecordRules(t *testing.T) {
	const now = int64(1_700_000_000_000)
	hour := DefaultTimestampAfterMs
	const zstd = int16(recordbatch.CodecZstd)
	def := Resolve(nil, nil, Settings{}.Ledger).Records
	check := def.Check(now, now, now, 0)
	for _, tc := range []struct {
		delta int64
		ok    bool
	}{{0, true}, {hour, true}, {hour + 1, false}, {-now, true}, {-now - 1, true}} {
		err := check(recordbatch.RecordMeta{TimestampDelta: tc.delta})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrTimestamp)) {
			t.Errorf("timestamp now%+d: %v", tc.delta, err)
		}
	}
	before := Resolve(map[string]string{"message.timestamp.before.max.ms": "1000"}, nil, Settings{}.Ledger).Records.Check(now, now, now, 0)
	if err := before(recordbatch.RecordMeta{TimestampDelta: -1001}); !errors.Is(err, ErrTimestamp) {
		t.Errorf("1001 ms old with before 1000: %v", err)
	}
	if err := before(recordbatch.RecordMeta{TimestampDelta: -1000}); err != nil {
		t.Errorf("1000 ms old with before 1000: %v", err)
	}
	lat := Resolve(map[string]string{"message.timestamp.type": "LogAppendTime"}, nil, Settings{}.Ledger).Records
	if c := lat.Check(now+10*hour, now+10*hour, now, 0); c != nil {
		t.Error("a LogAppendTime topic checks timestamps")
	}
	// A producer's LogAppendTime bit: refused on a LogAppendTime topic; on
	// a CreateTime topic every record is at the batch's max timestamp.
	if err := lat.Check(now, now, now, recordbatch.LogAppendTimeBit)(recordbatch.RecordMeta{}); !errors.Is(err, ErrTimestamp) {
		t.Errorf("a producer's LogAppendTime batch on a LogAppendTime topic: %v", err)
	}
	stamped := def.Check(now, now+hour+1, now, recordbatch.LogAppendTimeBit)
	if err := stamped(recordbatch.RecordMeta{}); !errors.Is(err, ErrTimestamp) {
		t.Errorf("a producer's LogAppendTime batch whose max timestamp is out of bounds: %v", err)
	}
	if err := def.Check(now-2*hour, now, now, recordbatch.LogAppendTimeBit)(recordbatch.RecordMeta{TimestampDelta: 4 * hour}); err != nil {
		t.Errorf("a producer's LogAppendTime batch within bounds at its max timestamp: %v", err)
	}
	md := Resolve(map[string]string{"max.decompressed.message.bytes": "100"}, nil, Settings{}.Ledger).Records
	if err := md.Check(now, now, now, zstd)(recordbatch.RecordMeta{Size: 101}); !errors.Is(err, ErrRecordBody) || !errors.Is(err, recordbatch.ErrInvalidRecord) {
		t.Errorf("compressed 101-byte record with bound 100: %v", err)
	}
	if err := md.Check(now, now, now, zstd)(recordbatch.RecordMeta{Size: 100}); err != nil {
		t.Errorf("compressed 100-byte record with bound 100: %v", err)
	}
	if err := md.Check(now, now, now, 0)(recordbatch.RecordMeta{Size: 101}); err != nil {
		t.Errorf("uncompressed record checked against the bound: %v", err)
	}
}
