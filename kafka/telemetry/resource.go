package telemetry

// resource.go: a subscription as the CLIENT_METRICS config resource
// (type 16) that DescribeConfigs, AlterConfigs and IncrementalAlterConfigs
// name; kafka/ authorizes and routes, the store validates and keeps.

import "github.com/kgateway/kgateway/topicconfig"

// SourceClientMetrics is CLIENT_METRICS_CONFIG, Kafka's source of a config
// set on a client-metrics resource.
const SourceClientMetrics topicconfig.Source = 7

// Describe describes resource name: every config, set
// (CLIENT_METRICS_CONFIG, itself its one synonym) or at its default
// (DEFAULT_CONFIG, no synonym), as Kafka describes one, whether or not
// the resource exists.
func (s *Store) Describe(name string) []topicconfig.Entry {
	set := s.Configs(name)
	var out []topicconfig.Entry
	for _, d := range Defs {
		e := topicconfig.Entry{Name: d.Name, Value: d.Default, Source: topicconfig.SourceDefault, Type: topicconfig.Type(d.Type)}
		if v, ok := set[d.Name]; ok {
			e.Value, e.Source = v, SourceClientMetrics
			e.Synonyms = []topicconfig.Synonym{{Name: e.Name, Value: e.Value, Source: e.Source}}
		}
		out = append(out, e)
	}
	return out
}

// Replace replaces resource name's configs (AlterConfigs); none removes
// the resource.
func (s *Store) Replace(name string, configs map[string]string, validateOnly bool) error {
	return s.Alter(name, func(map[string]string) (map[string]string, error) {
		return configs, nil
	}, validateOnly)
}

// AlterIncrementally applies IncrementalAlterConfigs ops to resource
// name; deleting every config removes it.
func (s *Store) AlterIncrementally(name string, ops []topicconfig.Op, validateOnly bool) error {
	conv := make([]ConfigOp, len(ops))
	for i, op := range ops {
		conv[i] = ConfigOp{Name: op.Name, Op: int8(op.Op), Value: op.Value}
	}
	return s.Alter(name, func(cur map[string]string) (map[string]string, error) {
		return ApplyOps(cur, conv)
	}, validateOnly)
}
