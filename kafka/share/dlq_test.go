package share

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
)

// deadLetters is a DeadLetterLog that keeps what was produced, per
// topic, decoded: each record's headers by key.
type deadLetters struct {
	mu      sync.Mutex
	configs map[string]map[string]string // topic: its configs (absent: no topic)
	got     []map[string]string
	fail    int // produces to fail (an error retrying may mend) before the first success
}

func (d *deadLetters) TopicConfig(topic, name string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.configs[topic]
	return c[name], ok
}

func (d *deadLetters) Produce(topic string, partition int32, batch []byte) error {
	d.mu.Lock()
	if d.fail > 0 {
		d.fail--
		d.mu.Unlock()
		return errRefused // fakeLog.Code: UNKNOWN_SERVER_ERROR, not a lasting refusal
	}
	d.mu.Unlock()
	recs, err := parseRecords(batch[batchHeaderLen:], 0)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range recs {
		d.got = append(d.got, decodeHeaders(r.headers))
	}
	return nil
}

func (d *deadLetters) Decompress(codec int8, sec []byte) ([]byte, error) {
	if codec != 0 {
		return nil, errRefused
	}
	return sec, nil
}

func (d *deadLetters) records() []map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]map[string]string(nil), d.got...)
}

func decodeHeaders(b []byte) map[string]string {
	out := map[string]string{}
	n, p := binary.Varint(b)
	b = b[p:]
	for range n {
		kl, p := binary.Varint(b)
		k := string(b[p : p+int(kl)])
		b = b[p+int(kl):]
		vl, p := binary.Varint(b)
		out[k] = string(b[p : p+int(vl)])
		b = b[p+int(vl):]
	}
	return out
}

// archivingStore is an offset store holding group g's state of t/0 as a
// crash left it: offsets 0-1 archiving below the delivery count limit
// (rejected), 2 archiving at it (5, out of deliveries), 3-9 available,
// and g's DLQ topic set.
func archivingStore(t *testing.T, dlqTopic string) *offsets.Store {
	t.Helper()
	store, err := offsets.Open(t.TempDir(), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	tp := offsets.TopicPartition{Topic: "t", Partition: 0}
	sp := offsets.SharePartition{TopicPartition: tp, StartOffset: 0, Runs: []offsets.ShareRun{
		{First: 0, Last: 1, State: offsets.ShareArchiving, DeliveryCount: 1},
		{First: 2, Last: 2, State: offsets.ShareArchiving, DeliveryCount: 5},
		{First: 3, Last: 9, State: offsets.ShareAvailable},
	}}
	if err := store.PutShareGroup(offsets.ShareGroup{ID: "g", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutShareStates([]offsets.ShareWrite{{Group: "g", Part: sp}}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutGroupConfigs("g", map[string]string{ConfigDLQTopic: dlqTopic}); err != nil {
		t.Fatal(err)
	}
	return store
}

// startOffset is g's durable SPSO of t/0.
func startOffset(t *testing.T, store *offsets.Store) int64 {
	t.Helper()
	parts, err := store.ShareState("g")
	if err != nil || len(parts) != 1 {
		t.Fatalf("share state: %v %v", parts, err)
	}
	return parts[0].StartOffset
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Records a crash left archiving (state written, DLQ copy perhaps not)
// get their DLQ copies when the coordinator starts, with Kafka's headers
// and cause (rejected below the delivery count limit, exceeded at it),
// and only then are archived: the SPSO moves past them durably (dlq.go,
// step 2 before step 3).
func TestDLQResumesArchivingAfterRestart(t *testing.T) {
	store := archivingStore(t, "dlq.t")
	dl := &deadLetters{configs: map[string]map[string]string{"dlq.t": {TopicConfigDLQEnable: "true"}}}
	_, err := NewCoordinator(store, fakeLog{}, nil, Config{DeliveryCountLimit: 5, DeadLetters: dl, DLQEnabled: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the archiving records archived", func() bool { return startOffset(t, store) == 3 })
	got := dl.records()
	if len(got) != 3 {
		t.Fatalf("DLQ got %d records, want 3: %v", len(got), got)
	}
	for i, h := range got {
		cause, count := causeRejected, "1"
		if i == 2 {
			cause, count = causeExceeded, "5"
		}
		want := map[string]string{hdrTopic: "t", hdrPartition: "0", hdrOffset: string(rune('0' + i)), hdrGroup: "g",
			hdrDeliveryCount: count, hdrMessage: cause}
		for k, v := range want {
			if h[k] != v {
				t.Errorf("record %d header %s = %q, want %q", i, k, h[k], v)
			}
		}
	}
}

// A DLQ the group cannot use is not written, and the records are
// archived regardless, as Kafka: share.version below 2 (UpdateFeatures
// to 1 turns DLQs off), a topic without errors.deadletterqueue.group.enable,
// a topic that does not exist.
func TestDLQUnusableArchivesRegardless(t *testing.T) {
	enabled := map[string]map[string]string{"dlq.t": {TopicConfigDLQEnable: "true"}, "t2": {TopicConfigDLQEnable: "true"},
		"__t": {TopicConfigDLQEnable: "true"}}
	for name, tc := range map[string]struct {
		enabled bool
		topic   string
		configs map[string]map[string]string
	}{
		"share.version 1":  {false, "dlq.t", enabled},
		"not enabled":      {true, "dlq.t", map[string]map[string]string{"dlq.t": {}}},
		"no topic":         {true, "dlq.t", map[string]map[string]string{}},
		"without dlq.":     {true, "t2", enabled},
		"internal-looking": {true, "__t", enabled},
	} {
		t.Run(name, func(t *testing.T) {
			store := archivingStore(t, tc.topic)
			dl := &deadLetters{configs: tc.configs}
			_, err := NewCoordinator(store, fakeLog{}, nil, Config{DeliveryCountLimit: 5, DeadLetters: dl, DLQEnabled: func() bool { return tc.enabled }})
			if err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the archiving records archived", func() bool { return startOffset(t, store) == 3 })
			if got := dl.records(); len(got) != 0 {
				t.Errorf("DLQ written: %v", got)
			}
		})
	}
}

// A produce that fails in a way retrying may mend leaves the records
// archiving (never archived without their copies) and is tried again
// until it succeeds.
func TestDLQTransientFailureRetried(t *testing.T) {
	store := archivingStore(t, "dlq.t")
	dl := &deadLetters{configs: map[string]map[string]string{"dlq.t": {TopicConfigDLQEnable: "true"}}, fail: 2}
	_, err := NewCoordinator(store, fakeLog{}, nil, Config{DeliveryCountLimit: 5, DeadLetters: dl, DLQEnabled: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the archiving records archived", func() bool { return startOffset(t, store) == 3 })
	if got := dl.records(); len(got) != 3 {
		t.Fatalf("DLQ got %d records after the failures, want 3", len(got))
	}
}
