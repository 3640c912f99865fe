package kafka

// Operability hooks: per-request metrics and logging, the supported-API
// table for documentation, and the state /readyz reports. Everything here
// is called once per request or per scrape, never per record (nothing on the hot path).

import (
	"time"

	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// reqStats is what the operability hooks track for one request.
type reqStats struct {
	size    int           // request frame bytes
	arrived time.Time     // when the frame was parsed
	waited  time.Duration // long-poll time (Fetch waiting for MinBytes)
	// durable is a Produce's wait for its batches' group commit: work
	// of the committer, not of the handler, so request_percentage does
	// not count it, as Kafka's does not count a produce's wait for its
	// replicas (remote time). The request's duration does.
	durable time.Duration
}

// addWait records a long-poll wait that began at start; it does not count
// as handling time (a long poll is not a slow request).
func (rc *reqCtx) addWait(start time.Time) { rc.stats.waited += time.Since(start) }

// APIInfo is one row of the dispatch table, for documentation.
type APIInfo struct {
	Key      int16
	Name     string
	Min, Max int16
}

// SupportedAPIs returns the dispatch table (apis.go) in key order: exactly
// what ApiVersions advertises.
func SupportedAPIs() []APIInfo {
	out := make([]APIInfo, 0, len(apis))
	for _, a := range apis {
		out = append(out, APIInfo{Key: a.key, Name: kmsg.NameForKey(a.key), Min: a.min, Max: a.max})
	}
	return out
}

// apiName is the label of a key in metrics and logs.
func apiName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return "Unknown"
}

// Ready reports whether the server is serving: a listener is set and Close
// has not begun.
func (s *Server) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.lns) > 0 && !s.mu.closed
}

// OpenConnections is the number of open client connections.
func (s *Server) OpenConnections() int { return s.open.Len() }

// InFlightRequests is the number of requests whose handler is running.
func (s *Server) InFlightRequests() int64 { return s.handling.Load() }

// observe runs when a handler ends (sl.Resp and sl.Err are set, sl.done not
// yet closed): metrics, the debug request log and the slow-request log.
func (s *Server) observe(sl *connection.Slot, rc *reqCtx, req kmsg.Request) {
	took := time.Since(rc.stats.arrived) - rc.stats.waited
	name := apiName(sl.Key)
	if o := s.cfg.Observer; o != nil {
		o.Request(name, rc.stats.size, took)
		s.observeBytes(o, req, sl.Resp)
	}
	if ce := s.log.Check(zap.DebugLevel, "request"); ce != nil {
		ce.Write(s.requestFields(sl, rc, took)...)
	}
	if slow := s.cfg.SlowRequest; slow > 0 && took > slow {
		s.log.Warn("slow-request", s.requestFields(sl, rc, took)...)
	}
}

func (s *Server) requestFields(sl *connection.Slot, rc *reqCtx, took time.Duration) []zap.Field {
	client := ""
	if rc.clientID != nil {
		client = *rc.clientID
	}
	return []zap.Field{
		zap.String("api", apiName(sl.Key)), zap.Int16("api-version", sl.Version),
		zap.String("client-id", client), zap.Stringer("remote", rc.conn.nc.RemoteAddr()),
		zap.Duration("duration", took), zap.Duration("long-poll-wait", rc.stats.waited),
		zap.Bool("failed", sl.Err != nil),
	}
}

// observeBytes reports record batch bytes per topic: what a Produce
// request carried and what a Fetch response serves.
func (s *Server) observeBytes(o Observer, req kmsg.Request, resp kmsg.Response) {
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		for _, t := range r.Topics {
			n := 0
			for _, p := range t.Partitions {
				n += len(p.Records)
			}
			o.ProduceBytes(t.Topic, n)
		}
	case *kmsg.FetchRequest:
		perTopic, ok := fetchRecordBytes(resp) // record batches are markers (kafka/fetchwire)
		if !ok {
			return
		}
		for topic, n := range perTopic {
			if n > 0 && topic != "" {
				o.FetchBytes(topic, n)
			}
		}
	}
}

// observeResponse reports a written response frame.
func (s *Server) observeResponse(key int16, n int) {
	if o := s.cfg.Observer; o != nil {
		o.Response(apiName(key), n)
	}
}
