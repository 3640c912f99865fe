package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Helpers shared by the config APIs (DescribeConfigs, AlterConfigs,
// IncrementalAlterConfigs). The resolver owns topic configs, package
// dynconfig the dynamic broker and internal topic configs (kept by a
// dynconfig.Configs): names, validation, persistence, sources and defaults;
// these only translate.

// checkConfigResource reports whether a request may address the resource:
// a topic with a legal name, this broker ("" or node.id), a group (its
// share-group configs, group_configs.go) or a client-metrics
// subscription (telemetry.go). Other types are INVALID_REQUEST, as
// broker loggers are to AlterConfigs in Kafka.
func (s *Server) checkConfigResource(typ kmsg.ConfigResourceType, name string) error {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if !topicadmin.ValidName(name) {
			return fmt.Errorf("%w: %q", resolver.ErrInvalidTopic, name)
		}
		return nil
	case kmsg.ConfigResourceTypeGroupConfig:
		if name == "" || s.coords().share == nil {
			return fmt.Errorf("%w: group config resource %q", kerr.InvalidRequest, name)
		}
		return nil
	case kmsg.ConfigResourceTypeClientMetrics:
		return s.checkClientMetricsResource(name) // telemetry.go
	case kmsg.ConfigResourceTypeBroker:
		if name != "" && name != strconv.Itoa(int(s.cfg.NodeID)) {
			// A broker's own configs are its to change and describe: the
			// Admin client sends them to it (ConfigAdminManager's answer).
			return kafkaWorded{sentinel: kerr.InvalidRequest,
				msg: fmt.Sprintf("Unexpected broker id, expected %d, but received %s", s.cfg.NodeID, name)}
		}
		return nil
	}
	return kafkaWorded{sentinel: kerr.InvalidRequest, msg: fmt.Sprintf("Unknown resource type %d", typ)}
}

// dynConfigs are the dynamic configs of this node: the shared catalog's
// in a cluster (nil, and refused, if the catalog keeps none), else the
// resolver's.
func (s *Server) dynConfigs() (dynconfig.Configs, error) {
	if s.cfg.Cluster == nil {
		return s.res.DynamicConfigs(), nil
	}
	if dc, ok := s.cfg.Cluster.Catalog().(dynconfig.Configs); ok {
		return dc, nil
	}
	return nil, fmt.Errorf("%w: this cluster's catalog keeps no dynamic configs", kerr.InvalidRequest)
}

// brokerLayer is the layer of dynamic broker configs a BROKER resource
// names (checkConfigResource first): "" every broker's default, else this
// broker's own.
func brokerLayer(name string) dynconfig.Layer {
	if name == "" {
		return dynconfig.LayerDefault
	}
	return dynconfig.LayerNode
}

// brokerConfigErr is how Kafka answers a refused broker config change:
// INVALID_REQUEST, whatever the reason (read-only, a bad value), with the
// reason alone as the message (ConfigAdminManager, KAFKA-13609).
func brokerConfigErr(err error) error {
	if err == nil || errors.Is(err, resolver.ErrStorage) {
		return err
	}
	msg := err.Error()
	for _, sentinel := range []error{dynconfig.ErrReadOnly, resolver.ErrInvalidConfig} {
		msg = strings.TrimPrefix(msg, sentinel.Error()+": ")
	}
	return kafkaWorded{sentinel: kerr.InvalidRequest, msg: msg}
}

// duplicateName returns the first config name listed twice, "" if none
// (Kafka refuses such a resource with INVALID_REQUEST).
func duplicateName(names []string) string {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}

// nullValue is the error for a config whose value is null where one is
// required.
func nullValue(name string) error {
	return fmt.Errorf("%w: null value for config %q", kerr.InvalidRequest, name)
}

func duplicateConfig(name string) error {
	return fmt.Errorf("%w: config %q is listed more than once", kerr.InvalidRequest, name)
}
