package kafka

// GetTelemetrySubscriptions (key 71), version 0 (KIP-714).
//
// A client asks which of its metrics to push, how often and how:
// kafka/telemetry assigns a client instance id when the request's is zero,
// matches the instance against the CLIENT_METRICS subscriptions, and
// answers the metric prefixes, the push interval, a subscription id,
// telemetry.max.bytes, the accepted compression types and delta
// temporality. Asking again before the push interval is
// THROTTLING_QUOTA_EXCEEDED (error code only). No authorization, as in
// Kafka. Served only with a telemetry manager (Config.Telemetry).

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleGetTelemetrySubscriptions(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := r.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	a, err := s.cfg.Telemetry.GetSubscriptions(r.ClientInstanceID, telemetryClient(rc), rc.conn.Principal())
	if err != nil {
		resp.ErrorCode = errCode(err)
		return resp, nil
	}
	resp.ClientInstanceID, resp.SubscriptionID = a.InstanceID, a.ID
	resp.AcceptedCompressionTypes, resp.PushIntervalMillis = a.Compression, a.IntervalMs
	resp.TelemetryMaxBytes, resp.DeltaTemporality, resp.RequestedMetrics = a.MaxBytes, a.DeltaTemporality, a.Metrics
	if resp.RequestedMetrics == nil {
		resp.RequestedMetrics = []string{}
	}
	return resp, nil
}
