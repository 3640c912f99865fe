package quota

import "time"

// Charge is one handled request as its client's sensors see it.
type Charge struct {
	Key            int16 // the request's API key
	User, ClientID string
	// Produce and Fetch say which bandwidth quota the request draws on
	// (neither for other keys, and for a follower's Fetch); Bytes is
	// the request's frame (Produce) or the records answered (Fetch).
	Produce, Fetch bool
	Bytes          int
	// Handled is the handler's own time: without the long-poll wait or
	// a produce's wait for its group commit (request_percentage).
	Handled time.Duration
	Now     time.Time
}

// Apply records c on the client's sensors, bandwidth, mutations and
// handler time, and returns the throttle in milliseconds (0: none), the
// largest of the bandwidth and the request-time throttles (Kafka's
// maybeRecordAndGetThrottleTimeMs then the larger of the two). note sees
// each kind's outcome and returns the throttle it counts. A throttled
// Fetch's bytes are taken back from its sensor, so they are charged when
// fetched again after the throttle; emptyFetch says its answer must go
// without records.
func (m *Manager) Apply(c Charge, note func(kind string, o Outcome) int64) (ms int64, emptyFetch bool) {
	nowMs := c.Now.UnixMilli()
	var bw int64
	switch {
	case c.Produce:
		bw = note(KindProduce, m.Record(KindProduce, c.User, c.ClientID, float64(c.Bytes), nowMs))
	case c.Fetch:
		o := m.Record(KindFetch, c.User, c.ClientID, float64(c.Bytes), nowMs)
		if bw = note(KindFetch, o); bw > 0 {
			m.Unrecord(KindFetch, o, float64(c.Bytes), nowMs)
			emptyFetch = true
		}
	}
	if Mutating(c.Key) {
		bw = max(bw, note(KindMutation, m.RecordMutations(c.User, c.ClientID, 0, nowMs)))
	}
	rq := note(KindRequest, m.Record(KindRequest, c.User, c.ClientID, c.Handled.Seconds()*100, nowMs))
	return max(bw, rq), emptyFetch
}
