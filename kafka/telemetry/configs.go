package telemetry

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The configs of a CLIENT_METRICS resource (Kafka's ClientMetricsConfigs):
// metrics (a list of metric name prefixes, "*" for all), interval.ms (the
// push interval, 100 ms to one hour) and match (a list of selector=regex,
// every one of which a client must match; none matches every client).
const (
	ConfigMetrics  = "metrics"
	ConfigInterval = "interval.ms"
	ConfigMatch    = "match"

	// DefaultIntervalMs is interval.ms's default, also the push interval
	// of a client no subscription matches.
	DefaultIntervalMs = 5 * 60 * 1000
	minIntervalMs     = 100
	maxIntervalMs     = 3600000

	// AllMetrics subscribes to every metric.
	AllMetrics = "*"
)

// The client instance selectors a match entry may name (KIP-714).
const (
	SelectInstanceID      = "client_instance_id"
	SelectClientID        = "client_id"
	SelectSoftwareName    = "client_software_name"
	SelectSoftwareVersion = "client_software_version"
	SelectSourceAddress   = "client_source_address"
	SelectSourcePort      = "client_source_port"
)

var selectors = []string{SelectInstanceID, SelectClientID, SelectSoftwareName,
	SelectSoftwareVersion, SelectSourceAddress, SelectSourcePort}

// ConfigType is a config's type as DescribeConfigs reports it.
type ConfigType int8

const (
	TypeInt  ConfigType = 3
	TypeList ConfigType = 7
)

// ConfigDef is one client-metrics config: its name, type and default.
type ConfigDef struct {
	Name    string
	Type    ConfigType
	Default string
}

// Defs lists the client-metrics configs in name order.
var Defs = []ConfigDef{
	{ConfigInterval, TypeInt, strconv.Itoa(DefaultIntervalMs)},
	{ConfigMatch, TypeList, ""},
	{ConfigMetrics, TypeList, ""},
}

func defOf(name string) (ConfigDef, bool) {
	i := slices.IndexFunc(Defs, func(d ConfigDef) bool { return d.Name == name })
	if i < 0 {
		return ConfigDef{}, false
	}
	return Defs[i], true
}

// Subscription is one parsed CLIENT_METRICS resource.
type Subscription struct {
	Name       string
	Metrics    []string
	IntervalMs int32
	Match      []Selector
}

// Selector is one match entry: a selector name and the regular
// expression the client's value must match as a whole.
type Selector struct {
	Name string
	re   *regexp.Regexp
}

// Parse validates a resource's configs as Kafka does and returns the
// subscription with its values normalised (lists joined by ",", the
// interval as a decimal). Errors: an empty name or an unknown config, or
// an interval out of range, is INVALID_REQUEST; a value that does not
// parse (an interval that is not an int, a match entry that is not selector=regex with a known selector and a valid
// expression) is INVALID_CONFIG.
func Parse(name string, configs map[string]string) (Subscription, map[string]string, error) {
	sub := Subscription{Name: name, IntervalMs: DefaultIntervalMs}
	if name == "" {
		return sub, nil, kafkaErr(kerr.InvalidRequest, "Subscription name can't be empty")
	}
	norm := make(map[string]string, len(configs))
	for _, k := range sortedKeys(configs) {
		if _, ok := defOf(k); !ok {
			return sub, nil, kafkaErr(kerr.InvalidRequest, "Unknown client metrics configuration: %s", k)
		}
	}
	if v, ok := configs[ConfigMetrics]; ok {
		list := parseList(v)
		sub.Metrics, norm[ConfigMetrics] = list, strings.Join(list, ",")
	}
	if v, ok := configs[ConfigInterval]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return sub, nil, kafkaErr(kerr.InvalidConfig, "Invalid value %s for configuration %s: Not a number of type INT", v, ConfigInterval)
		}
		if n < minIntervalMs || n > maxIntervalMs {
			return sub, nil, kafkaErr(kerr.InvalidRequest, "Invalid value %d for %s, interval must be between 100 and 3600000 (1 hour)", n, ConfigInterval)
		}
		sub.IntervalMs, norm[ConfigInterval] = int32(n), strconv.FormatInt(n, 10)
	}
	if v, ok := configs[ConfigMatch]; ok {
		list := parseList(v)
		var err error
		if sub.Match, err = parseMatch(list); err != nil {
			return sub, nil, err
		}
		norm[ConfigMatch] = strings.Join(list, ",")
	}
	return sub, norm, nil
}

// parseList splits a LIST config as Kafka's ConfigDef does: "" is the
// empty list, else the value trimmed and split at commas with the
// whitespace around them. Kafka 4.4 takes a value listed twice (a
// subscription's metrics are a set).
func parseList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	return listSplit.Split(v, -1)
}

var listSplit = regexp.MustCompile(`\s*,\s*`)

// parseMatch parses match entries "selector=regex": the entry split at
// "=" must have two parts (Java's String.split, trailing empty parts
// dropped), the selector trimmed must be known and the expression trimmed
// must compile. Kafka's expressions are Java regular expressions matched
// against the whole value; Go's RE2 lacks backreferences and lookaround,
// so such an expression is refused here (INVALID_CONFIG) where Kafka
// would take it.
func parseMatch(entries []string) ([]Selector, error) {
	var out []Selector
	for _, e := range entries {
		parts := strings.Split(e, "=")
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) != 2 || !slices.Contains(selectors, strings.TrimSpace(parts[0])) {
			return nil, kafkaErr(kerr.InvalidConfig, "Illegal client matching pattern: %s", e)
		}
		re, err := regexp.Compile(`^(?:` + strings.TrimSpace(parts[1]) + `)$`)
		if err != nil {
			return nil, kafkaErr(kerr.InvalidConfig, "Illegal client matching pattern: %s", e)
		}
		sel := Selector{Name: strings.TrimSpace(parts[0]), re: re}
		// A selector named twice: the last one counts (Kafka's map).
		out = slices.DeleteFunc(out, func(s Selector) bool { return s.Name == sel.Name })
		out = append(out, sel)
	}
	return out, nil
}

// Client is what a client instance is matched on: its instance id and
// the request's client id, the software name and version it sent in
// ApiVersions, and its connection's source address and port.
type Client struct {
	InstanceID      string
	ClientID        string
	SoftwareName    string
	SoftwareVersion string
	SourceAddress   string
	SourcePort      string
}

func (c Client) selector(name string) string {
	switch name {
	case SelectInstanceID:
		return c.InstanceID
	case SelectClientID:
		return c.ClientID
	case SelectSoftwareName:
		return c.SoftwareName
	case SelectSoftwareVersion:
		return c.SoftwareVersion
	case SelectSourceAddress:
		return c.SourceAddress
	case SelectSourcePort:
		return c.SourcePort
	}
	return ""
}

// Matches reports whether the client matches the subscription: every
// selector's expression matches the client's whole value (no selector:
// every client matches).
func (s Subscription) Matches(c Client) bool {
	for _, sel := range s.Match {
		if !sel.re.MatchString(c.selector(sel.Name)) {
			return false
		}
	}
	return true
}

// kafkaError is a refusal worded as Kafka words it (what its tools print),
// whose code errors.As still finds.
type kafkaError struct {
	code *kerr.Error
	msg  string
}

func (e kafkaError) Error() string { return e.msg }
func (e kafkaError) Unwrap() error { return e.code }

func kafkaErr(code *kerr.Error, format string, args ...any) error {
	return kafkaError{code, fmt.Sprintf(format, args...)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
