package quota

import "math"

// Window is a sensor's sampling: Samples samples of SizeMs each (Kafka's
// quota.window.num and quota.window.size.seconds).
type Window struct {
	Samples int
	SizeMs  int64
}

// DefaultWindow is Kafka's: 11 samples of one second.
var DefaultWindow = Window{Samples: 11, SizeMs: 1000}

func (w Window) orDefault() Window {
	if w.Samples < 2 {
		w.Samples = DefaultWindow.Samples
	}
	if w.SizeMs <= 0 {
		w.SizeMs = DefaultWindow.SizeMs
	}
	return w
}

// sample is one window's total, started at startMs, last recorded to at
// lastMs.
type sample struct {
	startMs int64
	lastMs  int64
	value   float64
}

// Rate is a sampled rate per second (Kafka's Rate over a SampledStat). Not
// safe for concurrent use: a Sensor guards it.
type Rate struct {
	w       Window
	samples []sample // at most w.Samples+1, a ring
	cur     int
}

// NewRate returns an empty rate sampled by w (zero fields: DefaultWindow's).
func NewRate(w Window) *Rate { return &Rate{w: w.orDefault()} }

// Record adds v at nowMs: to the current sample while it is younger than
// one window, else to a new one that replaces the oldest of Samples+1
// (Kafka keeps one sample more than it measures, so that a sample that
// started before the window but was recorded to within it still counts).
func (r *Rate) Record(v float64, nowMs int64) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{startMs: nowMs, lastMs: nowMs})
		r.cur = 0
	}
	if nowMs-r.samples[r.cur].startMs >= r.w.SizeMs {
		r.cur = (r.cur + 1) % (r.w.Samples + 1)
		if r.cur >= len(r.samples) {
			r.samples = append(r.samples, sample{startMs: nowMs, lastMs: nowMs})
		} else {
			r.samples[r.cur] = sample{startMs: nowMs, lastMs: nowMs}
		}
	}
	r.samples[r.cur].value += v
	r.samples[r.cur].lastMs = nowMs
}

// purge resets the samples that have aged out: last recorded to Samples
// windows or more before nowMs.
func (r *Rate) purge(nowMs int64) {
	expire := int64(r.w.Samples) * r.w.SizeMs
	for i := range r.samples {
		if nowMs-r.samples[i].lastMs >= expire {
			r.samples[i] = sample{startMs: nowMs, lastMs: nowMs}
		}
	}
}

// WindowMs is the time the rate is measured over at nowMs: from the
// oldest live sample's start, and at least Samples-1 whole windows
// (Kafka's Rate.windowSize), never 0.
func (r *Rate) WindowMs(nowMs int64) int64 {
	r.purge(nowMs)
	oldest := nowMs
	for _, s := range r.samples {
		oldest = min(oldest, s.startMs)
	}
	elapsed := nowMs - oldest
	full := elapsed / r.w.SizeMs
	if minFull := int64(r.w.Samples - 1); full < minFull {
		elapsed += (minFull - full) * r.w.SizeMs
	}
	return max(elapsed, 1)
}

// total is the sum of the live samples at nowMs.
func (r *Rate) total(nowMs int64) float64 {
	r.purge(nowMs)
	t := 0.0
	for _, s := range r.samples {
		t += s.value
	}
	return t
}

// Measure is the rate per second at nowMs.
func (r *Rate) Measure(nowMs int64) float64 {
	w := r.WindowMs(nowMs)
	return r.total(nowMs) / (float64(w) / 1000)
}

// Unrecord takes back v recorded at nowMs (a throttled fetch sends no
// records: what its response would have held is not counted).
func (r *Rate) Unrecord(v float64, nowMs int64) { r.Record(-v, nowMs) }

// ThrottleMs is how long a client measured by r must send nothing for its
// rate to come back to quota (per second): (rate-quota)/quota × window,
// rounded; 0 within quota (Kafka's QuotaUtils.throttleTime).
func (r *Rate) ThrottleMs(quota float64, nowMs int64) int64 {
	if quota <= 0 || math.IsInf(quota, 1) {
		return 0
	}
	w := r.WindowMs(nowMs)
	rate := r.total(nowMs) / (float64(w) / 1000)
	if rate <= quota {
		return 0
	}
	return int64(math.Round((rate - quota) / quota * float64(w)))
}

// TokenBucket is controller_mutation_rate's measure (KIP-599): tokens
// refill at the quota per second up to a burst of quota × Samples × Size,
// and each mutation takes one token per partition, going into debt.
type TokenBucket struct {
	w      Window
	tokens float64
	lastMs int64
	init   bool
}

// NewTokenBucket returns a full bucket sampled by w.
func NewTokenBucket(w Window) *TokenBucket { return &TokenBucket{w: w.orDefault()} }

func (b *TokenBucket) burst(quota float64) float64 {
	return quota * float64(b.w.Samples) * float64(b.w.SizeMs) / 1000
}

// refill brings the bucket to nowMs under quota.
func (b *TokenBucket) refill(quota float64, nowMs int64) {
	if !b.init {
		b.tokens, b.lastMs, b.init = b.burst(quota), nowMs, true
		return
	}
	if nowMs > b.lastMs {
		b.tokens = min(b.burst(quota), b.tokens+quota*float64(nowMs-b.lastMs)/1000)
		b.lastMs = nowMs
	}
}

// InDebt says whether the bucket is below zero at nowMs: a strict
// mutation is refused then.
func (b *TokenBucket) InDebt(quota float64, nowMs int64) bool {
	b.refill(quota, nowMs)
	return b.tokens < 0
}

// Take records n mutations at nowMs.
func (b *TokenBucket) Take(quota, n float64, nowMs int64) {
	b.refill(quota, nowMs)
	b.tokens -= n
}

// ThrottleMs is the time the debt takes to repay at quota per second.
func (b *TokenBucket) ThrottleMs(quota float64, nowMs int64) int64 {
	b.refill(quota, nowMs)
	if b.tokens >= 0 || quota <= 0 {
		return 0
	}
	return int64(math.Round(-b.tokens / quota * 1000))
}
