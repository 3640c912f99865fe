package quota

// A throttle's mark on a response: throttle_time_ms, whether the
// response's version has the client throttle itself (KIP-219), and a
// throttled Fetch's answer, which carries no records.

import "github.com/twmb/franz-go/pkg/kmsg"

// SetThrottle sets throttleMs as resp's throttle_time_ms (capped to an
// int32) and reports whether the client throttles itself at resp's
// version (KIP-219). A nil resp (acks=0) answers nothing: the connection
// is muted, as a self-throttling client's is.
func SetThrottle(resp kmsg.Response, throttleMs int64) (self bool) {
	if tr, ok := resp.(kmsg.SetThrottleResponse); ok {
		tr.SetThrottle(int32(min(throttleMs, int64(^uint32(0)>>1))))
	}
	if tr, ok := resp.(kmsg.ThrottleResponse); ok {
		_, self = tr.Throttle()
	}
	if resp == nil {
		self = true // acks=0: nothing to delay, the connection is muted
	}
	return self
}

// ThrottledFetch makes a throttled Fetch's answer Kafka's: no partitions
// for a fetch without a session, or one that was to open a session (the
// session just opened is dropped through removeSession: the client opens
// it again after the throttle). An incremental fetch keeps its
// partitions, records emptied: its session already counts them as sent
// (their offsets and bounds), and the client fetches the same offsets
// again after the throttle.
func ThrottledFetch(r *kmsg.FetchRequest, fr *kmsg.FetchResponse, removeSession func(id int32)) {
	if fr.ErrorCode != 0 {
		return
	}
	if r.Version < 7 || r.SessionEpoch <= 0 {
		if fr.SessionID != 0 {
			removeSession(fr.SessionID)
			fr.SessionID = 0
		}
		fr.Topics = []kmsg.FetchResponseTopic{}
		return
	}
	for i := range fr.Topics {
		for j := range fr.Topics[i].Partitions {
			fr.Topics[i].Partitions[j].RecordBatches = []byte{} // empty, not null: clients refuse a null record set
		}
	}
}
