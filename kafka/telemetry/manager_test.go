package telemetry

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"google.golang.org/protobuf/proto"
)

// An instance is forgotten after its expiry (three push intervals, at
// least a minute) without a request; then its old subscription id is
// unknown to a push, which re-creates it.
func TestInstanceExpiry(t *testing.T) {
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Alter("s", func(map[string]string) (map[string]string, error) {
		return map[string]string{ConfigMetrics: "*", ConfigInterval: "30000"}, nil
	}, false); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	m := NewManager(st, Options{Now: func() time.Time { return now }})
	a, err := m.GetSubscriptions([16]byte{}, Client{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Instances() != 1 {
		t.Fatalf("%d instances", m.Instances())
	}
	now = now.Add(89 * time.Second) // under 3 × 30 s
	if _, err := m.GetSubscriptions([16]byte{}, Client{}, ""); err != nil {
		t.Fatal(err)
	}
	if m.Instances() != 2 {
		t.Fatalf("%d instances before the expiry, want 2", m.Instances())
	}
	now = now.Add(2 * time.Second) // the first is 91 s old
	if _, err := m.GetSubscriptions([16]byte{}, Client{}, ""); err != nil {
		t.Fatal(err)
	}
	if m.Instances() != 2 {
		t.Fatalf("%d instances after the first's expiry, want 2", m.Instances())
	}
	// A push with the forgotten instance's id starts it afresh: the push
	// is accepted by time and checked against the new subscription id,
	// which for the same subscription is the same.
	err = m.Push(Push{InstanceID: a.InstanceID, SubscriptionID: a.ID + 1}, Client{}, "")
	if !errors.Is(err, kerr.UnknownSubscriptionID) {
		t.Fatalf("push to a re-created instance with a wrong id: %v", err)
	}
}

// Clients subscribing and pushing at once while /metrics is scraped and
// the subscriptions change: run with -race.
func TestConcurrentClients(t *testing.T) {
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sink := NewSink(SinkOptions{})
	m := NewManager(st, Options{Sink: sink})
	payload, err := proto.Marshal(gauges(3))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				a, err := m.GetSubscriptions([16]byte{}, Client{ClientID: "c"}, "User:x")
				if err != nil {
					t.Error(err)
					return
				}
				// UNKNOWN_SUBSCRIPTION_ID when the set changed meanwhile.
				if err := m.Push(Push{InstanceID: a.InstanceID, SubscriptionID: a.ID, Metrics: payload}, Client{}, ""); err != nil && !errors.Is(err, kerr.UnknownSubscriptionID) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			interval := strconv.Itoa(1000 + i)
			if err := st.Alter("s", func(map[string]string) (map[string]string, error) {
				return map[string]string{ConfigMetrics: "*", ConfigInterval: interval}, nil
			}, false); err != nil {
				t.Error(err)
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(sink)
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
}
