package kafka

// Client quotas at dispatch (kafka/quota has the rules): after a request
// is handled, its bytes (Produce: the request; Fetch: the records
// answered) and its handler time are recorded on the client's sensors,
// and a client over a quota gets the larger throttle time in its
// response's throttle_time_ms. Then, as Kafka does (KIP-219), the
// response is written at once and the connection is not read for the
// throttle time (kafka/connection: Conn.Mute); a client too old to throttle itself (a
// response version before KIP-219) gets its response only after the
// throttle time instead. A throttled Fetch answers no records: they are
// taken back from the sensor and fetched again after the throttle.
//
// The user a quota is resolved for is the principal's name (ANONYMOUS
// without authentication), the client id the request header's.

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuotaObserver is implemented by an Observer that counts throttles
// (metrics.Metrics): kind is the quota key, user and clientID the
// sensor's tags.
type QuotaObserver interface {
	Throttled(kind, user, clientID string, d time.Duration)
}

// quotaIdentity is the user and client id quotas are resolved for.
func quotaIdentity(rc *reqCtx) (user, clientID string) {
	user = strings.TrimPrefix(rc.conn.Principal(), auth.UserPrincipal(""))
	if rc.clientID != nil {
		clientID = *rc.clientID
	}
	return user, clientID
}

// beforeQuotas bounds what a Fetch may answer to the client's
// consumer_byte_rate over the quota window (Kafka's
// getMaxValueInQuotaWindow): one response never holds more than the
// window allows.
func (s *Server) beforeQuotas(rc *reqCtx, req kmsg.Request) {
	r, ok := req.(*kmsg.FetchRequest)
	if !ok || fetchReplicaID(r) >= 0 {
		return
	}
	if max, ok := s.quotas.WindowBytes(quotaIdentity(rc)); ok && int64(r.MaxBytes) > max {
		r.MaxBytes = int32(max)
	}
}

// applyQuotas records the handled request on the client's sensors
// (quota.Manager.Apply) and returns its throttle time (0: none) and
// whether the response's version has the client throttle itself
// (KIP-219); it sets throttle_time_ms.
func (s *Server) applyQuotas(rc *reqCtx, req kmsg.Request, resp kmsg.Response) (time.Duration, bool) {
	if quota.Exempt(rc.key) {
		return 0, false
	}
	c := quota.Charge{Key: rc.key, Bytes: rc.stats.size, Now: time.Now()}
	c.User, c.ClientID = quotaIdentity(rc)
	c.Handled = c.Now.Sub(rc.stats.arrived) - rc.stats.waited - rc.stats.durable
	fr, fetch := req.(*kmsg.FetchRequest)
	switch {
	case fetch && fetchReplicaID(fr) < 0 && resp != nil:
		c.Fetch, c.Bytes = true, fetchResponseBytes(resp)
	case !fetch:
		_, c.Produce = req.(*kmsg.ProduceRequest)
	}
	ms, empty := s.quotas.Apply(c, func(kind string, o quota.Outcome) int64 { return s.noteThrottle(rc, kind, o) })
	if empty {
		s.throttledFetch(fr, resp)
	}
	if ms <= 0 {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, quota.SetThrottle(resp, ms)
}

// noteThrottle reports a throttle to the observer and returns it; a
// connection a quota applies to is read one request at a time from then
// on (kafka/connection: readAhead).
func (s *Server) noteThrottle(rc *reqCtx, kind string, o quota.Outcome) int64 {
	if o.OK && rc.conn.loop != nil {
		rc.conn.loop.LimitedByQuota()
	}
	if o.ThrottleMs > 0 {
		if qo, ok := s.cfg.Observer.(QuotaObserver); ok {
			qo.Throttled(kind, o.Tags.User, o.Tags.ClientID, time.Duration(o.ThrottleMs)*time.Millisecond)
		}
	}
	return o.ThrottleMs
}

// fetchResponseBytes is the record bytes a Fetch response answers.
func fetchResponseBytes(resp kmsg.Response) int {
	perTopic, _ := fetchRecordBytes(resp)
	n := 0
	for _, b := range perTopic {
		n += b
	}
	return n
}

// throttledFetch empties a throttled Fetch's answer (quota.ThrottledFetch).
func (s *Server) throttledFetch(r *kmsg.FetchRequest, resp kmsg.Response) {
	switch x := resp.(type) {
	case *batchResponse:
		quota.ThrottledFetch(r, x.FetchResponse, s.sessions.Remove)
	case *kmsg.FetchResponse:
		quota.ThrottledFetch(r, x, s.sessions.Remove)
	}
}

// errMutationQuota is Kafka's refusal of a strict mutation in debt.
var errMutationQuota = kafkaWorded{kerr.ThrottlingQuotaExceeded, "The throttling quota has been exceeded."}

// mutationRefused says whether a topic's mutation must be refused
// (KIP-599): the request is strict and the client's bucket is in debt.
func (s *Server) mutationRefused(rc *reqCtx) error {
	if !quota.Strict(rc.key, rc.version) {
		return nil
	}
	user, cid := quotaIdentity(rc)
	if s.quotas.MutationInDebt(user, cid, time.Now().UnixMilli()) {
		return errMutationQuota
	}
	return nil
}

// mutated takes n partition mutations (created, deleted or added) of one
// topic from the client's controller_mutation_rate bucket.
func (s *Server) mutated(rc *reqCtx, n int32) {
	if n <= 0 {
		return
	}
	user, cid := quotaIdentity(rc)
	s.quotas.RecordMutations(user, cid, float64(n), time.Now().UnixMilli())
}
