package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The timeline lists the requests before the first response of the
// workload's key, the first one, each gap over stallGap, and a summary
// whose gap percentiles and time in gaps come from the key's responses
// only; before begin and after write nothing is recorded.
func TestTimelineWrite(t *testing.T) {
	var out bytes.Buffer
	tl := &timeline{out: &out}
	tl.mu.events = []tlEvent{{at: time.Millisecond, key: 1}} // before begin: dropped by begin
	tl.begin()
	at := func(msec float64, key int16, n int) {
		tl.mu.events = append(tl.mu.events, tlEvent{at: time.Duration(msec * float64(time.Millisecond)), key: key, bytes: n})
	}
	at(1, 18, 100)   // ApiVersions
	at(2, 3, 100)    // Metadata
	at(4, 1, 1e6)    // first fetch
	at(5, 1, 1e6)    // 1 ms
	at(6, 71, 100)   // telemetry, after the first fetch: not listed
	at(6, 1, 1e6)    // 1 ms
	at(26, 1, 1e6)   // a 20 ms stall
	at(27.5, 1, 1e6) // 1.5 ms
	tl.write("sys w3", 1, 30*time.Millisecond)
	got := out.String()
	for _, want := range []string{
		"timeline sys w3:    1.00 ms key 18",
		"timeline sys w3:    2.00 ms key 3",
		"timeline sys w3:    4.00 ms first key 1",
		"timeline sys w3:   26.00 ms gap 20.00 ms before response 4",
		"end 30.0 ms, 5 responses from 4.00 to 27.50 ms; gaps p50 1.00 p90 1.50 p99 1.50 max 20.00 ms, 20.0 ms in gaps over 5ms",
		"MB/s per 50ms: 100",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "key 71") || strings.Contains(got, "gap 1.") {
		t.Errorf("listed a later request or a short gap:\n%s", got)
	}
	tl.OnBrokerE2E(kgo.BrokerMetadata{}, 1, kgo.BrokerE2E{})
	if n := len(tl.mu.events); n != 0 {
		t.Errorf("%d events recorded after write", n)
	}
}
