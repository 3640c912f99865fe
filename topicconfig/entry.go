package topicconfig

import (
	"errors"
	"slices"
	"strings"
)

// ErrInvalid wraps every refusal of a config set (Kafka's INVALID_CONFIG).
var ErrInvalid = errors.New("invalid config")

// Source says where a described config value comes from. The values are
// Kafka's (DescribeConfigs v1+ config_source).
type Source int8

const (
	SourceTopic                Source = 1 // DYNAMIC_TOPIC_CONFIG: set on the topic
	SourceDynamicBroker        Source = 2 // DYNAMIC_BROKER_CONFIG: set at run time on this broker
	SourceDynamicDefaultBroker Source = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG: set at run time for every broker
	SourceStaticBroker         Source = 4 // STATIC_BROKER_CONFIG: a broker flag
	SourceDefault              Source = 5 // DEFAULT_CONFIG: Kafka's default
	SourceDynamicGroup         Source = 8 // DYNAMIC_GROUP_CONFIG: set on the group
)

// Type is a config's value type. The values are Kafka's (DescribeConfigs
// v3+ config_type).
type Type int8

const (
	TypeBoolean Type = 1
	TypeString  Type = 2
	TypeInt     Type = 3
	TypeLong    Type = 5
	TypeDouble  Type = 6
	TypeList    Type = 7
)

// Synonym is one value a config could take, in precedence order
// (DescribeConfigs v1+ synonyms): the topic's own, the broker flag's,
// Kafka's default.
type Synonym struct {
	Name   string
	Value  string
	Source Source
}

// Entry is one config as DescribeConfigs reports it.
type Entry struct {
	Name     string
	Value    string
	Default  bool // true when not set explicitly on the topic
	Source   Source
	ReadOnly bool // broker configs are static (flags); topic configs are not
	Type     Type
	Synonyms []Synonym
}

// Broker maps broker config names (log.retention.ms, ...) to the broker's
// values: the defaults of the topic configs that name them.
type Broker map[string]string

// Value is a topic config's effective value: set on the topic, else the
// broker's, else Kafka's default.
func Value(set map[string]string, broker Broker, name string) string {
	if v, ok := set[name]; ok {
		return v
	}
	spec := table[name]
	if spec.broker != "" {
		if v, ok := broker[spec.broker]; ok {
			return v
		}
	}
	return spec.def
}

// Entries describes every known topic config for a topic with set
// configured explicitly, sorted by name, with its effective value, source
// and synonyms (DescribeConfigs reports all of them, not only the ones
// set).
func Entries(set map[string]string, broker Broker) []Entry {
	return EntriesWith(set, func(name string) []Synonym {
		if v, ok := broker[name]; ok && v != table[topicOf[name]].def {
			return []Synonym{{Name: name, Value: v, Source: SourceStaticBroker}}
		}
		return nil
	})
}

// EntriesWith is Entries with the broker's synonyms of each broker config
// name given by brokerSyns, in precedence order (dynamic per-broker,
// dynamic default, static), Kafka's default left out.
func EntriesWith(set map[string]string, brokerSyns func(brokerName string) []Synonym) []Entry {
	out := make([]Entry, 0, len(table))
	for name, spec := range table {
		e := Entry{Name: name, Type: spec.typ}
		if v, ok := set[name]; ok {
			e.Synonyms = append(e.Synonyms, Synonym{Name: name, Value: v, Source: SourceTopic})
		}
		syn := name
		if spec.broker != "" && spec.broker != noSynonym {
			syn = spec.broker
			e.Synonyms = append(e.Synonyms, brokerSyns(spec.broker)...)
		}
		if spec.broker != noSynonym {
			e.Synonyms = append(e.Synonyms, Synonym{Name: syn, Value: spec.def, Source: SourceDefault})
		}
		e.Value, e.Source = spec.def, SourceDefault
		if len(e.Synonyms) > 0 {
			e.Value, e.Source = e.Synonyms[0].Value, e.Synonyms[0].Source
		}
		e.Default = e.Source != SourceTopic
		out = append(out, e)
	}
	SortEntries(out)
	return out
}

// SortEntries sorts entries by name, as DescribeConfigs lists them.
func SortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
}
