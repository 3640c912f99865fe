package kafka

// ListConfigResources (key 74), versions 0–1; Kafka 3.7's
// ListClientMetricsResources (KIP-714), renamed and widened by KIP-1142.
//
//   v0  the client-metrics resources (flexible from the start).
//   v1  resource types to list (none: every supported type), and each
//       resource's type.
//
// The types served are those whose configs DescribeConfigs describes:
// the broker (this node, or each live node in cluster mode), every
// topic Metadata lists (internal ones too), the groups that have
// configs set (the share-group configs of the GROUP resource), and
// the client-metrics subscriptions (kafka/telemetry), and this node's
// loggers (BROKER_LOGGER, node-local). Another type is UNSUPPORTED_VERSION,
// as in Kafka; v0 serves client metrics only.
// DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.

import (
	"slices"
	"strconv"

	"github.com/kgateway/kgateway/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config resource types (DescribeConfigs' resource_type).
const (
	configTypeTopic         int8 = 2
	configTypeBroker        int8 = 4
	configTypeClientMetrics int8 = 16
	configTypeGroup         int8 = 32
)

func handleListConfigResources(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ListConfigResourcesRequest)
	resp := r.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !rc.allowedCluster(auth.OpDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	supported := []int8{configTypeClientMetrics}
	if r.Version >= 1 {
		supported = []int8{configTypeBroker, configTypeTopic, configTypeGroup, configTypeClientMetrics, int8(kmsg.ConfigResourceTypeBrokerLogger)}
	}
	types := r.ResourceTypes
	if len(types) == 0 {
		types = supported
	}
	for _, t := range types {
		if !slices.Contains(supported, t) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			return resp, nil
		}
	}
	add := func(typ int8, name string) {
		cr := kmsg.NewListConfigResourcesResponseConfigResource()
		cr.Name, cr.Type = name, typ
		resp.ConfigResources = append(resp.ConfigResources, cr)
	}
	for _, typ := range supported { // each type once, in a fixed order
		if !slices.Contains(types, typ) {
			continue
		}
		switch typ {
		case configTypeBroker:
			for _, b := range s.brokers(rc) {
				add(typ, strconv.Itoa(int(b.NodeID)))
			}
		case int8(kmsg.ConfigResourceTypeBrokerLogger):
			add(typ, strconv.Itoa(int(s.cfg.NodeID)))
		case configTypeTopic:
			for _, name := range s.allTopicNames() {
				add(typ, name)
			}
		case configTypeGroup:
			if c := s.coords().share; c != nil {
				for _, g := range c.ConfiguredGroups() {
					add(typ, g)
				}
			}
		case configTypeClientMetrics:
			if s.cfg.Telemetry != nil {
				for _, name := range s.cfg.Telemetry.Store().Names() {
					add(typ, name)
				}
			}
		}
	}
	return resp, nil
}
