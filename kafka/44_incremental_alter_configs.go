package kafka

// IncrementalAlterConfigs (key 44), versions 0–1.
//
//   v0  per config SET, DELETE (back to the default), APPEND and SUBTRACT
//       (list configs only: cleanup.policy, *.throttled.replicas);
//       validate_only.
//   v1  flexible.
//
// The resolver applies a TOPIC's ops in order to its explicit configs and
// validates and persists the result as one change, so a resource either
// changes as a whole or not at all. APPEND/SUBTRACT on a config that is
// not a list, an unknown config or an invalid result is INVALID_CONFIG
// with a message; a name listed twice or a null value for SET, APPEND or
// SUBTRACT is INVALID_REQUEST.
// In cluster mode the change goes through the shared catalog (topic changes through the catalog).
// CLIENT_METRICS resources (KIP-714 subscriptions) are validated as
// Kafka's ClientMetricsConfigs and kept by kafka/telemetry's store;
// removing every config removes the subscription (telemetry.go).
// BROKER resources change the dynamic broker configs of this broker (its
// node id) or every broker's default ("") (package dynconfig; in cluster
// mode kept in etcd and applied on every node); a read-only or invalid
// one is INVALID_REQUEST, as Kafka answers. BROKER_LOGGER: this node's
// logger levels (kafka/brokerlogger). Other types are INVALID_REQUEST.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/kafka/brokerlogger"
	"github.com/kgateway/kgateway/logging"
	"github.com/kgateway/kgateway/topicconfig"
)

func handleIncrementalAlterConfigs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.IncrementalAlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range r.Resources {
		out := kmsg.NewIncrementalAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = rr.ResourceType, rr.ResourceName
		err := s.incrementalAlter(rr, r.ValidateOnly)
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		resp.Resources = append(resp.Resources, out)
	}
	return resp, nil
}

func (s *Server) incrementalAlter(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if rr.ResourceType == kmsg.ConfigResourceTypeBrokerLogger {
		return brokerlogger.IncrementalAlter(logging.Of(s.log), s.cfg.NodeID, rr, validateOnly)
	} else if err := s.checkConfigResource(rr.ResourceType, rr.ResourceName); err != nil {
		return err
	}
	names := make([]string, len(rr.Configs))
	ops := make([]topicconfig.Op, len(rr.Configs))
	for i, c := range rr.Configs {
		names[i] = c.Name
		op := topicconfig.Op{Name: c.Name, Op: topicconfig.OpType(c.Op)}
		switch {
		case c.Op < kmsg.IncrementalAlterConfigOpSet || c.Op > kmsg.IncrementalAlterConfigOpSubtract:
			return fmt.Errorf("%w: unknown operation %d on %q", kerr.InvalidRequest, c.Op, c.Name)
		case c.Value != nil:
			op.Value = *c.Value
		case c.Op != kmsg.IncrementalAlterConfigOpDelete:
			return nullValue(c.Name)
		}
		ops[i] = op
	}
	if dup := duplicateName(names); dup != "" {
		return duplicateConfig(dup)
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeClientMetrics {
		return s.cfg.Telemetry.Store().AlterIncrementally(rr.ResourceName, ops, validateOnly)
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
		return s.alterGroupConfigs(rr.ResourceName, ops, validateOnly)
	}
	_, internal := internalTopicConfigs[rr.ResourceName]
	if rr.ResourceType == kmsg.ConfigResourceTypeBroker || internal { // package dynconfig
		dc, err := s.dynConfigs()
		if err != nil {
			return err
		}
		if rr.ResourceType == kmsg.ConfigResourceTypeBroker {
			return brokerConfigErr(dc.IncrementalAlterBrokerConfigs(brokerLayer(rr.ResourceName), ops, validateOnly))
		}
		return dc.IncrementalAlterInternalTopicConfigs(rr.ResourceName, internalTopicConfigs[rr.ResourceName], ops, validateOnly)
	}
	return s.catalog().IncrementalAlterTopicConfigs(rr.ResourceName, ops, validateOnly)
}
