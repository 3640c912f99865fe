package kafka

// Client telemetry (KIP-714): the CLIENT_METRICS config resources that
// hold the subscriptions (DescribeConfigs, AlterConfigs,
// IncrementalAlterConfigs on resource type 16) and what a request tells
// kafka/telemetry of its client. The logic is kafka/telemetry's.

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/kafka/telemetry"
	"github.com/kgateway/kgateway/topicconfig"
)

// sourceClientMetrics is CLIENT_METRICS_CONFIG, Kafka's source of a config
// set on a client-metrics resource.
const sourceClientMetrics topicconfig.Source = 7

// telemetryClient is the request's client as the subscription selectors
// see it: client id, the software of the connection's ApiVersions
// ("unknown" without one, as Kafka's ClientInformation), source address
// and port.
func telemetryClient(rc *reqCtx) telemetry.Client {
	c := telemetry.Client{SoftwareName: "unknown", SoftwareVersion: "unknown", SourceAddress: rc.conn.peerHost()}
	if rc.clientID != nil {
		c.ClientID = *rc.clientID
	}
	if sw := rc.conn.software.Load(); sw != nil {
		c.SoftwareName, c.SoftwareVersion = sw[0], sw[1]
	}
	if a, ok := rc.conn.nc.RemoteAddr().(*net.TCPAddr); ok {
		c.SourcePort = strconv.Itoa(a.Port)
	}
	return c
}

// clientMetricsConfigs describes a client-metrics resource: every config,
// set (CLIENT_METRICS_CONFIG, itself its one synonym) or at its default
// (DEFAULT_CONFIG, no synonym), as Kafka describes one, whether or not
// the resource exists.
func (s *Server) clientMetricsConfigs(name string) []topicconfig.Entry {
	set := s.cfg.Telemetry.Store().Configs(name)
	var out []topicconfig.Entry
	for _, d := range telemetry.Defs {
		e := topicconfig.Entry{Name: d.Name, Value: d.Default, Source: topicconfig.SourceDefault, Type: topicconfig.Type(d.Type)}
		if v, ok := set[d.Name]; ok {
			e.Value, e.Source = v, sourceClientMetrics
			e.Synonyms = []topicconfig.Synonym{{Name: e.Name, Value: e.Value, Source: e.Source}}
		}
		out = append(out, e)
	}
	return out
}

// alterClientMetrics replaces a client-metrics resource's configs
// (AlterConfigs); none removes the resource.
func (s *Server) alterClientMetrics(name string, configs map[string]string, validateOnly bool) error {
	return s.cfg.Telemetry.Store().Alter(name, func(map[string]string) (map[string]string, error) {
		return configs, nil
	}, validateOnly)
}

// incrementalAlterClientMetrics applies IncrementalAlterConfigs ops to a
// client-metrics resource; deleting every config removes it.
func (s *Server) incrementalAlterClientMetrics(name string, ops []topicconfig.Op, validateOnly bool) error {
	conv := make([]telemetry.ConfigOp, len(ops))
	for i, op := range ops {
		conv[i] = telemetry.ConfigOp{Name: op.Name, Op: int8(op.Op), Value: op.Value}
	}
	return s.cfg.Telemetry.Store().Alter(name, func(cur map[string]string) (map[string]string, error) {
		return telemetry.ApplyOps(cur, conv)
	}, validateOnly)
}

// checkClientMetricsResource: the resource type is served only with a
// telemetry manager, and a subscription needs a name.
func (s *Server) checkClientMetricsResource(name string) error {
	if s.cfg.Telemetry == nil {
		return fmt.Errorf("%w: client metrics resources are not served", kerr.InvalidRequest)
	}
	if name == "" {
		return fmt.Errorf("%w: subscription name can't be empty", kerr.InvalidRequest)
	}
	return nil
}
