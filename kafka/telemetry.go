package kafka

// Client telemetry (KIP-714): whether the CLIENT_METRICS config resources
// (type 16) are served, and what a request tells kafka/telemetry of its
// client. The logic is kafka/telemetry's.

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/kafka/telemetry"
)

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
