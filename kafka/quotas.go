package kafka

// Client quotas at dispatch (kafka/quota has the rules): after a request
// is handled, its bytes (Produce: the request; Fetch: the records
// answered) and its handler time are recorded on the client's sensors,
// and a client over a quota gets the larger throttle time in its
// response's throttle_time_ms. Then, as Kafka does (KIP-219), the
// response is written at once and the connection is not read for the
// throttle time (conn.mute); a client too old to throttle itself (a
// response version before KIP-219) gets its response only after the
// throttle time instead. A throttled Fetch answers no records: they are
// taken back from the sensor and fetched again after the throttle.
//
// The user a quota is resolved for is the principal's name (ANONYMOUS
// without authentication), the client id the request header's.

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka/quota"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// QuotaObserver is implemented by an Observer that counts throttles
// (metrics.Metrics): kind is the quota key, user and clientID the
// sensor's tags.
type QuotaObserver interface {
	Throttled(kind, user, clientID string, d time.Duration)
}

// quotaExempt are the requests no request quota applies to: the ones a
// client needs before it can know it is throttled.
var quotaExempt = map[int16]bool{apiKeyApiVersions: true, apiKeySaslHandshake: true, apiKeySaslAuthenticate: true}

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

// applyQuotas records the handled request on the client's sensors and
// returns its throttle time (0: none) and whether the response's version
// has the client throttle itself (KIP-219); it sets throttle_time_ms.
func (s *Server) applyQuotas(rc *reqCtx, req kmsg.Request, resp kmsg.Response) (time.Duration, bool) {
	if quotaExempt[rc.key] {
		return 0, false
	}
	user, cid := quotaIdentity(rc)
	now := time.Now()
	nowMs := now.UnixMilli()
	var bw int64
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		o := s.quotas.Record(quota.KindProduce, user, cid, float64(rc.stats.size), nowMs)
		bw = s.noteThrottle(rc, quota.KindProduce, o)
	case *kmsg.FetchRequest:
		if fetchReplicaID(r) >= 0 || resp == nil {
			break
		}
		n := fetchResponseBytes(resp)
		o := s.quotas.Record(quota.KindFetch, user, cid, float64(n), nowMs)
		if bw = s.noteThrottle(rc, quota.KindFetch, o); bw > 0 {
			s.quotas.Unrecord(quota.KindFetch, o, float64(n), nowMs)
			s.throttledFetch(r, resp)
		}
	}
	if mutating[rc.key] {
		bw = max(bw, s.noteThrottle(rc, quota.KindMutation, s.quotas.RecordMutations(user, cid, 0, nowMs)))
	}
	handled := now.Sub(rc.stats.arrived) - rc.stats.waited - rc.stats.durable
	o := s.quotas.Record(quota.KindRequest, user, cid, handled.Seconds()*100, nowMs)
	rq := s.noteThrottle(rc, quota.KindRequest, o)
	ms := max(bw, rq)
	if ms <= 0 {
		return 0, false
	}
	self := false
	if tr, ok := resp.(kmsg.SetThrottleResponse); ok {
		tr.SetThrottle(int32(min(ms, int64(^uint32(0)>>1))))
	}
	if tr, ok := resp.(kmsg.ThrottleResponse); ok {
		_, self = tr.Throttle()
	}
	if resp == nil {
		self = true // acks=0: nothing to delay, the connection is muted
	}
	return time.Duration(ms) * time.Millisecond, self
}

// noteThrottle reports a throttle to the observer and returns it; a
// connection a quota applies to is read one request at a time from then
// on (conn.readAhead).
func (s *Server) noteThrottle(rc *reqCtx, kind string, o quota.Outcome) int64 {
	if o.OK && !rc.conn.quotaLimited.Load() {
		rc.conn.quotaLimited.Store(true)
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

// throttledFetch makes a throttled Fetch's answer Kafka's: no partitions
// for a fetch without a session, or one that was to open a session (the
// session just opened is dropped: the client opens it again after the
// throttle). An incremental fetch keeps its partitions, records emptied:
// its session already counts them as sent (their offsets and bounds), and
// the client fetches the same offsets again after the throttle.
func (s *Server) throttledFetch(r *kmsg.FetchRequest, resp kmsg.Response) {
	var fr *kmsg.FetchResponse
	switch x := resp.(type) {
	case *batchResponse:
		fr = x.FetchResponse
	case *kmsg.FetchResponse:
		fr = x
	default:
		return
	}
	if fr.ErrorCode != 0 {
		return
	}
	if r.Version < 7 || r.SessionEpoch <= 0 {
		if fr.SessionID != 0 {
			s.sessions.Remove(fr.SessionID)
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

// mutating are the requests controller_mutation_rate counts (KIP-599),
// and strictFrom the version from which each is strict: refused
// THROTTLING_QUOTA_EXCEEDED while the client is in debt, rather than
// admitted and throttled.
var (
	mutating   = map[int16]bool{19: true, 20: true, 37: true}
	strictFrom = map[int16]int16{19: 6, 20: 5, 37: 3}
)

// errMutationQuota is Kafka's refusal of a strict mutation in debt.
var errMutationQuota = kafkaWorded{kerr.ThrottlingQuotaExceeded, "The throttling quota has been exceeded."}

// mutationRefused says whether a topic's mutation must be refused
// (KIP-599): the request is strict and the client's bucket is in debt.
func (s *Server) mutationRefused(rc *reqCtx) error {
	if rc.version < strictFrom[rc.key] {
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

// hostOf is a remote address's IP (its string when it has none).
func hostOf(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// admitIP applies the per-IP connection bounds to a new connection, with
// s.mu held: beyond max.connections.per.ip (or its override for ip) it
// is closed at once; over its connection_creation_rate (KIP-612) it is
// held open, unread, for the throttle time and then closed, as Kafka
// does, so that a client reconnecting in a loop is slowed down.
func (s *Server) admitIP(nc net.Conn, ip string) bool {
	limit, ok := s.ipLimits[ip]
	if !ok {
		limit = s.cfg.MaxConnectionsPerIP
	}
	if limit > 0 && s.perIP[ip] >= limit || ok && limit == 0 {
		s.log.Debug("connection-refused-max-connections-per-ip", zap.String("ip", ip), zap.Int("limit", limit))
		nc.Close()
		return false
	}
	if ms := s.quotas.RecordConnection(ip, time.Now().UnixMilli()); ms > 0 {
		s.log.Debug("connection-throttled", zap.String("ip", ip), zap.Int64("throttle-ms", ms))
		time.AfterFunc(time.Duration(ms)*time.Millisecond, func() { nc.Close() })
		return false
	}
	return true
}

// resolveIPLimits maps max.connections.per.ip.overrides to addresses: an
// IP as it is, a host name to every address it resolves to now.
func resolveIPLimits(overrides map[string]int) (map[string]int, error) {
	out := make(map[string]int, len(overrides))
	for host, n := range overrides {
		if ip := net.ParseIP(host); ip != nil {
			out[ip.String()] = n
			continue
		}
		addrs, err := net.LookupHost(host)
		if err != nil {
			return nil, fmt.Errorf("kafka: config: max.connections.per.ip.overrides: %s: %w", host, err)
		}
		for _, a := range addrs {
			out[a] = n
		}
	}
	return out, nil
}
