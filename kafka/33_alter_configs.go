package kafka

// AlterConfigs (key 33), versions 0–2.
//
//   v0  replace a resource's configs; validate_only.
//   v1  nothing new (throttling after the response).
//   v2  flexible.
//
// A TOPIC's explicit configs are replaced by the request's set, as in
// Kafka: a config left out goes back to its default. Validation, storage
// and applying the settings (rollover, retention, max.message.bytes,
// LogAppendTime) are the resolver's; an invalid value fails the whole
// resource with INVALID_CONFIG and a message naming every problem.
// A name listed twice, or a null value, is INVALID_REQUEST.
// In cluster mode the change goes through the shared catalog (topic changes through the catalog).
// CLIENT_METRICS resources (KIP-714 subscriptions) are validated as
// Kafka's ClientMetricsConfigs and kept by kafka/telemetry's store;
// removing every config removes the subscription (telemetry.go).
// BROKER resources set the dynamic broker configs of this broker (its
// node id) or every broker's default (""), replacing that layer's set
// (package dynconfig; in cluster mode kept in etcd and applied on every
// node); a read-only or invalid one is INVALID_REQUEST, as Kafka answers. Other resource types are
// INVALID_REQUEST.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterConfigs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.AlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range r.Resources {
		out := kmsg.NewAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = rr.ResourceType, rr.ResourceName
		err := s.alterConfigs(rr, r.ValidateOnly)
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		resp.Resources = append(resp.Resources, out)
	}
	return resp, nil
}

func (s *Server) alterConfigs(rr kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	if err := s.checkConfigResource(rr.ResourceType, rr.ResourceName); err != nil {
		return err
	}
	names := make([]string, len(rr.Configs))
	configs := make(map[string]string, len(rr.Configs))
	for i, c := range rr.Configs {
		names[i] = c.Name
		if c.Value == nil {
			return nullValue(c.Name)
		}
		configs[c.Name] = *c.Value
	}
	if dup := duplicateName(names); dup != "" {
		return duplicateConfig(dup)
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeBroker { // package dynconfig
		dc, err := s.dynConfigs()
		if err != nil {
			return err
		}
		return brokerConfigErr(dc.AlterBrokerConfigs(brokerLayer(rr.ResourceName), configs, validateOnly))
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeClientMetrics {
		return s.cfg.Telemetry.Store().Replace(rr.ResourceName, configs, validateOnly)
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
		return fmt.Errorf("%w: group configs are altered with IncrementalAlterConfigs", kerr.InvalidRequest)
	}
	if initial, ok := internalTopicConfigs[rr.ResourceName]; ok {
		dc, err := s.dynConfigs()
		if err != nil {
			return err
		}
		return dc.AlterInternalTopicConfigs(rr.ResourceName, initial, configs, validateOnly)
	}
	return s.catalog().AlterTopicConfigs(rr.ResourceName, configs, validateOnly)
}
