package brokerlogger

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kgateway/kgateway/logging"
	"github.com/kgateway/kgateway/topicconfig"
)

// Source is DYNAMIC_BROKER_LOGGER_CONFIG, every logger's source.
const Source topicconfig.Source = 6

// worded is an error with Kafka's code and Kafka's message.
type worded struct {
	code *kerr.Error
	msg  string
}

func (e worded) Error() string { return e.msg }
func (e worded) Unwrap() error { return e.code }

func invalidRequest(format string, args ...any) error {
	return worded{kerr.InvalidRequest, fmt.Sprintf(format, args...)}
}

func invalidConfig(format string, args ...any) error {
	return worded{kerr.InvalidConfig, fmt.Sprintf(format, args...)}
}

// Describe lists the loggers of reg as the BROKER_LOGGER resource named
// resource, which must be this node's id.
func Describe(reg *logging.Registry, nodeID int32, resource string) ([]topicconfig.Entry, error) {
	if resource == "" {
		return nil, invalidRequest("Broker id must not be empty")
	}
	id, err := strconv.Atoi(resource)
	if err != nil {
		return nil, invalidRequest("Broker id must be an integer, but it is: %s", resource)
	}
	if id != int(nodeID) {
		return nil, invalidRequest("Unexpected broker id, expected %d but received %s", nodeID, resource)
	}
	var out []topicconfig.Entry
	for _, l := range reg.Loggers() {
		out = append(out, topicconfig.Entry{Name: l.Name, Value: l.Level, Source: Source})
	}
	return out, nil
}

// IncrementalAlter applies an IncrementalAlterConfigs resource of type
// BROKER_LOGGER to reg: all of its operations or, if one is refused, none.
func IncrementalAlter(reg *logging.Registry, nodeID int32, rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	changes, err := check(reg, nodeID, rr)
	if err != nil {
		return err
	}
	if err := reg.Apply(changes, validateOnly); err != nil {
		return invalidConfig("%v", err) // a logger went away since check: not possible today
	}
	return nil
}

// check validates the resource in Kafka's order: duplicate names, null
// values, the node id, then each operation.
func check(reg *logging.Registry, nodeID int32, rr kmsg.IncrementalAlterConfigsRequestResource) ([]logging.Change, error) {
	seen := map[string]bool{}
	var nulls []string
	for _, c := range rr.Configs {
		if seen[c.Name] {
			return nil, invalidRequest("Error due to duplicate config keys")
		}
		seen[c.Name] = true
		if c.Value == nil && c.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return nil, invalidRequest("Null value not supported for : %s", strings.Join(nulls, ","))
	}
	if id, err := strconv.Atoi(rr.ResourceName); err != nil {
		return nil, invalidRequest("Node id must be an integer, but it is: %s", rr.ResourceName)
	} else if id != int(nodeID) {
		return nil, invalidRequest("Unexpected node id. Expected %d, but received %s", nodeID, rr.ResourceName)
	}
	exists := map[string]bool{}
	for _, l := range reg.Loggers() {
		exists[l.Name] = true
	}
	changes := make([]logging.Change, 0, len(rr.Configs))
	for _, c := range rr.Configs {
		ch, err := change(c, exists)
		if err != nil {
			return nil, err
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// change is one operation as a logging.Change, or Kafka's refusal.
func change(c kmsg.IncrementalAlterConfigsRequestResourceConfig, exists map[string]bool) (logging.Change, error) {
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete:
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		return logging.Change{}, invalidRequest("%s operation is not allowed for the BROKER_LOGGER resource", c.Op)
	default:
		return logging.Change{}, invalidRequest("Unknown operation %d on %s", c.Op, c.Name)
	}
	if !exists[c.Name] {
		return logging.Change{}, invalidConfig("Logger %s does not exist!", c.Name)
	}
	if c.Op == kmsg.IncrementalAlterConfigOpDelete {
		if c.Name == logging.RootName {
			return logging.Change{}, invalidRequest("Removing the log level of the root logger is not allowed")
		}
		return logging.Change{Logger: c.Name}, nil
	}
	if !logging.ValidLevel(*c.Value) {
		return logging.Change{}, invalidConfig("Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s",
			c.Name, *c.Value, strings.Join(logging.Levels(), ", "))
	}
	return logging.Change{Logger: c.Name, Level: *c.Value}, nil
}
