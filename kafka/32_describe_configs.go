package kafka

// DescribeConfigs (key 32), versions 0–4.
//
//   v0  value, read-only, is-default, is-sensitive per config.
//   v1  include_synonyms; each config's source (DYNAMIC_TOPIC_CONFIG,
//       STATIC_BROKER_CONFIG, DEFAULT_CONFIG) and, if asked, its synonyms
//       in precedence order.
//   v2  nothing new.
//   v3  config type; include_documentation.
//   v4  flexible.
//
// TOPIC resources describe every topic config Kafka defines, set or not,
// each with its default and its source, as Kafka does; an unset one has its broker default
// (STATIC_BROKER_CONFIG when a flag set it) or Kafka's (DEFAULT_CONFIG).
// BROKER resources by node.id describe the broker configs the resolver
// knows (log.retention.ms, log.segment.bytes, ...), the dynamic ones
// writable, with their sources (package dynconfig), and the wire
// server's and its coordinators' own (kafka/config BrokerEntries), read-only;
// the cluster-wide default resource ("") describes only the configs set
// dynamically for every broker, as Kafka does. CLIENT_METRICS resources (KIP-714 subscriptions,
// telemetry.go) describe metrics, interval.ms and match, set
// (CLIENT_METRICS_CONFIG) or at their defaults, whether the resource
// exists or not, as Kafka does. BROKER_LOGGER: kafka/brokerlogger.
// config_names filters (null: all). Documentation: topicconfig/docs.go.
// Other resource types are INVALID_REQUEST; no config is sensitive.

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/kafka/brokerlogger"
	"github.com/kgateway/kgateway/logging"
	"github.com/kgateway/kgateway/topicconfig"
)

func handleDescribeConfigs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeConfigsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range r.Resources {
		resp.Resources = append(resp.Resources, s.describeConfigs(r, rr))
	}
	return resp, nil
}

func (s *Server) describeConfigs(r *kmsg.DescribeConfigsRequest, rr kmsg.DescribeConfigsRequestResource) kmsg.DescribeConfigsResponseResource {
	out := kmsg.NewDescribeConfigsResponseResource()
	out.ResourceType, out.ResourceName = rr.ResourceType, rr.ResourceName
	entries, err := s.configEntries(rr.ResourceType, rr.ResourceName)
	if err != nil {
		out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		return out
	}
	for _, e := range entries {
		if rr.ConfigNames != nil && !slices.Contains(rr.ConfigNames, e.Name) {
			continue
		}
		out.Configs = append(out.Configs, describedConfig(r, e))
	}
	return out
}

// configEntries lists a resource's configs (checkConfigResource first).
func (s *Server) configEntries(typ kmsg.ConfigResourceType, name string) ([]topicconfig.Entry, error) {
	if typ == kmsg.ConfigResourceTypeBrokerLogger {
		return brokerlogger.Describe(logging.Of(s.log), s.cfg.NodeID, name)
	} else if err := s.checkConfigResource(typ, name); err != nil {
		return nil, err
	}
	if typ == kmsg.ConfigResourceTypeBroker && name == "" {
		return brokerDefaultLayer(s.res.BrokerConfigs()), nil
	}
	if typ == kmsg.ConfigResourceTypeBroker {
		return s.brokerConfigs(), nil
	}
	if typ == kmsg.ConfigResourceTypeGroupConfig {
		return s.groupConfigs(name), nil
	}
	if typ == kmsg.ConfigResourceTypeClientMetrics {
		return s.cfg.Telemetry.Store().Describe(name), nil
	}
	if initial, ok := internalTopicConfigs[name]; ok {
		dc, err := s.dynConfigs()
		if err != nil {
			return nil, err
		}
		set, err := dc.InternalTopicConfigs(name, initial)
		if err != nil {
			return nil, err
		}
		return s.res.ConfigsFor(set), nil
	}
	return s.res.TopicConfigs(name)
}

// brokerConfigs are the resolver's broker configs (retention, segments,
// message size, ...) plus those the wire server and its coordinators
// own (kafka/config BrokerEntries), sorted by name.
func (s *Server) brokerConfigs() []topicconfig.Entry {
	out := append(s.res.BrokerConfigs(), s.cfg.BrokerEntries()...)
	slices.SortFunc(out, func(a, b topicconfig.Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// brokerDefaultLayer is what the cluster-wide default BROKER resource ("")
// describes, as Kafka does: only the configs set dynamically for every
// broker, each with that value as its only synonym.
func brokerDefaultLayer(all []topicconfig.Entry) []topicconfig.Entry {
	var out []topicconfig.Entry
	for _, e := range all {
		for _, syn := range e.Synonyms {
			if syn.Source == topicconfig.SourceDynamicDefaultBroker {
				e.Value, e.Source, e.Default, e.Synonyms = syn.Value, syn.Source, false, []topicconfig.Synonym{syn}
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func describedConfig(r *kmsg.DescribeConfigsRequest, e topicconfig.Entry) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	value := e.Value
	c.Name, c.Value, c.ReadOnly = e.Name, &value, e.ReadOnly
	// v0's is_default; v1+ derive it from the source the same way Kafka does.
	c.IsDefault = e.Source == topicconfig.SourceDefault
	c.Source = kmsg.ConfigSource(e.Source)
	c.ConfigType = kmsg.ConfigType(e.Type)
	c.Documentation = topicconfig.Documentation(e.Name, e.Source == brokerlogger.Source, r.Version >= 3 && r.IncludeDocumentation)
	if r.Version >= 1 && r.IncludeSynonyms {
		for _, syn := range e.Synonyms {
			sc := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			v := syn.Value
			sc.Name, sc.Value, sc.Source = syn.Name, &v, kmsg.ConfigSource(syn.Source)
			c.ConfigSynonyms = append(c.ConfigSynonyms, sc)
		}
	}
	return c
}
