package kafka

// PushTelemetry (key 72), version 0 (KIP-714).
//
// A client pushes its subscribed metrics: an OTLP MetricsData protobuf,
// compressed with one of the accepted codecs or not. kafka/telemetry
// checks it against the instance's subscription (instance id, interval,
// subscription id, codec, telemetry.max.bytes), decodes it and keeps the
// metrics for /metrics with the client's labels. Errors as Kafka's:
// INVALID_REQUEST, THROTTLING_QUOTA_EXCEEDED, UNKNOWN_SUBSCRIPTION_ID,
// UNSUPPORTED_COMPRESSION_TYPE, TELEMETRY_TOO_LARGE, INVALID_RECORD.
// No authorization, as in Kafka. Served only with a telemetry manager.

import (
	"github.com/kgateway/kgateway/kafka/telemetry"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handlePushTelemetry(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.PushTelemetryRequest)
	resp := r.ResponseKind().(*kmsg.PushTelemetryResponse)
	err := s.cfg.Telemetry.Push(telemetry.Push{
		InstanceID: r.ClientInstanceID, SubscriptionID: r.SubscriptionID, Terminating: r.Terminating,
		Compression: r.CompressionType, Metrics: r.Metrics,
	}, telemetryClient(rc), rc.conn.Principal())
	resp.ErrorCode = errCode(err)
	return resp, nil
}
