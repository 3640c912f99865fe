package quota

import (
	"math"
	"testing"
)

func TestRateWindowIsAtLeastSamplesMinusOne(t *testing.T) {
	r := NewRate(DefaultWindow)
	r.Record(1000, 0)
	// One sample only: the window is stretched to 10 whole windows.
	if w := r.WindowMs(0); w != 10*1000 {
		t.Fatalf("window at 0 = %d, want 10000", w)
	}
	if got := r.Measure(0); got != 100 {
		t.Fatalf("rate = %v, want 100/s", got)
	}
	// After 12 s every sample has aged out.
	if got := r.Measure(12_000); got != 0 {
		t.Fatalf("rate after expiry = %v, want 0", got)
	}
}

func TestThrottleBringsRateBackToQuota(t *testing.T) {
	r := NewRate(DefaultWindow)
	r.Record(20_000, 0) // 2000/s over the 10 s floor
	th := r.ThrottleMs(1000, 0)
	if th != 10_000 {
		t.Fatalf("throttle = %d, want (2000-1000)/1000*10000 = 10000", th)
	}
	if got := r.ThrottleMs(5000, 0); got != 0 {
		t.Fatalf("within quota: throttle %d", got)
	}
}

// TestClientObeyingThrottleHoldsQuota simulates a client that sends a
// batch whenever it is not throttled and checks what the end-to-end
// tests assert: over two whole quota windows (2 × 11 s) from its first
// byte it gets its quota within 10%. A new sensor lets a client fill its
// first window at once and the window's samples expire together, so the
// admitted bytes come in bursts one window apart: over a span that is not
// a whole number of windows the rate is not the quota.
func TestClientObeyingThrottleHoldsQuota(t *testing.T) {
	const quota = 1 << 20
	const batch = 64 << 10
	span := 2 * int64(DefaultWindow.Samples) * DefaultWindow.SizeMs
	r := NewRate(DefaultWindow)
	var now, sent int64
	for now < span {
		r.Record(batch, now)
		sent += batch
		now += max(r.ThrottleMs(quota, now), 5) // at most 200 requests/s
	}
	rate := float64(sent) / (float64(span) / 1000)
	if math.Abs(rate-quota)/quota > 0.10 {
		t.Fatalf("rate over %d ms: %.0f B/s, quota %d", span, rate, quota)
	}
}

func TestTokenBucket(t *testing.T) {
	b := NewTokenBucket(DefaultWindow)
	const q = 2 // mutations per second: burst 22
	if b.InDebt(q, 0) {
		t.Fatal("new bucket in debt")
	}
	b.Take(q, 30, 0) // 8 in debt
	if !b.InDebt(q, 0) {
		t.Fatal("not in debt after 30 of 22")
	}
	if th := b.ThrottleMs(q, 0); th != 4000 {
		t.Fatalf("throttle = %d, want 8/2 s", th)
	}
	if b.InDebt(q, 4000) {
		t.Fatal("still in debt after repaying")
	}
}
