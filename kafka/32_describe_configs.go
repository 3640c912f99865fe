package kafka

// DescribeConfigs (key 32), versions 0–4.
//
//   v1  config source and synonyms (IsDefault is v0 only).
//   v2  nothing new.     v3  config type and documentation.
//   v4  flexible.
//
// A topic reports every topic config it has, set or not, with its value
// and source: DYNAMIC_TOPIC_CONFIG when set on the topic, DEFAULT_CONFIG
// otherwise (the resolver knows the defaults). A broker (our node id, or
// the empty name) reports the few broker settings this server owns, read
// only. Synonyms, when asked for, list the config itself.
// Left out: config types and documentation, other resource types
// (INVALID_REQUEST), broker-level dynamic configs.

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleDescribeConfigs(s *Server, rc *reqCtx, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.DescribeConfigsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range r.Resources {
		out := kmsg.NewDescribeConfigsResponseResource()
		out.ResourceType, out.ResourceName = rr.ResourceType, rr.ResourceName
		entries, err := s.describeResource(rr.ResourceType, rr.ResourceName)
		if err != nil {
			out.ErrorCode, out.ErrorMessage = errCode(err), errMessage(err)
		} else {
			out.Configs = describedConfigs(entries, rr.ConfigNames, r.IncludeSynonyms)
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp, nil
}

// describedEntry is one config with where its value comes from.
type describedEntry struct {
	resolver.ConfigEntry
	source   kmsg.ConfigSource
	readOnly bool
}

func (s *Server) describeResource(typ kmsg.ConfigResourceType, name string) ([]describedEntry, error) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		entries, err := s.res.TopicConfigs(name)
		if err != nil {
			return nil, err
		}
		out := make([]describedEntry, len(entries))
		for i, e := range entries {
			out[i] = describedEntry{ConfigEntry: e, source: kmsg.ConfigSourceDynamicTopicConfig}
			if e.Default {
				out[i].source = kmsg.ConfigSourceDefaultConfig
			}
		}
		return out, nil
	case kmsg.ConfigResourceTypeBroker:
		if name != "" && name != strconv.Itoa(int(s.cfg.NodeID)) {
			return nil, fmt.Errorf("%w: broker %q is not this broker (%d)", kerr.InvalidRequest, name, s.cfg.NodeID)
		}
		return s.brokerConfigs(), nil
	default:
		return nil, fmt.Errorf("%w: resource type %d is not described", kerr.InvalidRequest, typ)
	}
}

// brokerConfigs are the broker settings the wire server owns.
func (s *Server) brokerConfigs() []describedEntry {
	id := strconv.Itoa(int(s.cfg.NodeID))
	static := func(name, value string) describedEntry {
		return describedEntry{ConfigEntry: resolver.ConfigEntry{Name: name, Value: value},
			source: kmsg.ConfigSourceStaticBrokerConfig, readOnly: true}
	}
	return []describedEntry{
		static("broker.id", id),
		static("node.id", id),
		static("socket.request.max.bytes", strconv.Itoa(int(s.cfg.MaxRequestBytes))),
	}
}

// describedConfigs renders entries, keeping only names when it is non-nil.
func describedConfigs(entries []describedEntry, names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, e := range entries {
		if names != nil && !slices.Contains(names, e.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		value := e.Value
		c.Name, c.Value, c.ReadOnly = e.Name, &value, e.readOnly
		c.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig
		c.Source = e.source
		if synonyms {
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			syn.Name, syn.Value, syn.Source = e.Name, &value, e.source
			c.ConfigSynonyms = append(c.ConfigSynonyms, syn)
		}
		out = append(out, c)
	}
	return out
}
