package server

import (
	"context"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/cluster/authstore"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/kafka/telemetry"
)

// openTelemetry gives the Kafka front end client telemetry (KIP-714):
// the CLIENT_METRICS subscriptions kept in DataDir, or in a cluster in
// one etcd document every node follows (the data directory is a cache
// there), and a sink of the pushed metrics registered on /metrics. What
// kc already has (a test's own manager) stays.
func (s *Server) openTelemetry(kc *kafka.Config) error {
	if kc.Telemetry != nil {
		return nil
	}
	var (
		st  *telemetry.Store
		err error
	)
	if s.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n := s.cluster.node
		d, err := authstore.Open(ctx, n.Client(), clientMetricsKey(n.Prefix()), authstore.Options{Logger: named(nil, s.cfg.Logger, "telemetry")})
		if err != nil {
			return fmt.Errorf("cluster client metrics: %w", err)
		}
		s.cluster.authDocs = append(s.cluster.authDocs, d) // closed with them
		st, err = telemetry.OpenSharedStore(d)
	} else {
		st, err = telemetry.OpenStore(s.cfg.DataDir)
	}
	if err != nil {
		return fmt.Errorf("client metrics: %w", err)
	}
	sink := telemetry.NewSink(telemetry.SinkOptions{})
	if err := s.metrics.Registry.Register(sink); err != nil {
		return err
	}
	kc.Telemetry = telemetry.NewManager(st, telemetry.Options{MaxBytes: s.cfg.TelemetryMaxBytes, Sink: sink})
	return nil
}

// clientMetricsKey is the etcd key of a cluster's CLIENT_METRICS
// resources (one JSON document, kafka/telemetry's file format).
func clientMetricsKey(prefix string) string { return prefix + "telemetry/client-metrics" }
