package resolver

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ConfigOpType is an IncrementalAlterConfigs operation. The values are
// Kafka's.
type ConfigOpType int8

const (
	OpSet      ConfigOpType = 0
	OpDelete   ConfigOpType = 1 // back to the default
	OpAppend   ConfigOpType = 2 // list configs only: add items not present
	OpSubtract ConfigOpType = 3 // list configs only: remove items
)

func (o ConfigOpType) String() string {
	switch o {
	case OpSet:
		return "SET"
	case OpDelete:
		return "DELETE"
	case OpAppend:
		return "APPEND"
	case OpSubtract:
		return "SUBTRACT"
	}
	return fmt.Sprintf("op-%d", int8(o))
}

// ConfigOp is one IncrementalAlterConfigs change.
type ConfigOp struct {
	Name  string
	Op    ConfigOpType
	Value string
}

// IncrementalAlterTopicConfigs applies ops to the topic's explicit
// configs, in order, and then validates and persists the result as one
// change (all or nothing). APPEND and SUBTRACT start from the effective
// value (the default when not set, as Kafka does) and apply only to list
// configs (cleanup.policy, *.throttled.replicas); on any other config they
// are ErrInvalidConfig.
func (r *Resolver) IncrementalAlterTopicConfigs(name string, ops []ConfigOp, validateOnly bool) error {
	r.adminMu.Lock()
	defer r.adminMu.Unlock()
	t, err := r.boundTopic(name)
	if err != nil {
		// Kafka validates the changes before it looks the topic up: an
		// invalid one is INVALID_CONFIG even for a missing topic.
		if verr := r.validateOps(ops); verr != nil {
			return verr
		}
		return err
	}
	configs, err := r.planOps(t, ops)
	if err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	return r.replaceConfigsLocked(t, configs)
}

// validateOps checks ops as if on a topic with nothing set.
func (r *Resolver) validateOps(ops []ConfigOp) error {
	configs, err := r.applyOps(nil, ops)
	if err != nil {
		return err
	}
	return r.validateConfigs(configs)
}

// planOps is the validated config set ops leave on t.
func (r *Resolver) planOps(t *topic, ops []ConfigOp) (map[string]string, error) {
	configs, err := r.applyOps(t.configs, ops)
	if err != nil {
		return nil, err
	}
	if err := r.validateConfigs(configs); err != nil {
		return nil, err
	}
	if err := r.checkViewName(t.name, configs); err != nil { // W4
		return nil, err
	}
	return configs, nil
}

// applyOps returns a copy of set with ops applied; every problem is
// reported at once.
func (r *Resolver) applyOps(set map[string]string, ops []ConfigOp) (map[string]string, error) {
	out := maps.Clone(set)
	if out == nil {
		out = map[string]string{}
	}
	var errs []error
	for _, op := range ops {
		spec, ok := topicConfigs[op.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("unknown topic config %q", op.Name))
			continue
		}
		switch op.Op {
		case OpSet:
			out[op.Name] = op.Value
		case OpDelete:
			delete(out, op.Name)
		case OpAppend, OpSubtract:
			if !spec.list() {
				errs = append(errs, fmt.Errorf("%s %s: not a list config", op.Op, op.Name))
				continue
			}
			out[op.Name] = editList(r.value(out, op.Name), op)
		default:
			errs = append(errs, fmt.Errorf("%s: unknown operation %d", op.Name, int8(op.Op)))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
	}
	return out, nil
}

// editList appends op's items not already in cur, or removes them.
func editList(cur string, op ConfigOp) string {
	items := splitList(cur)
	for _, v := range splitList(op.Value) {
		has := slices.Contains(items, v)
		switch {
		case op.Op == OpAppend && !has:
			items = append(items, v)
		case op.Op == OpSubtract && has:
			items = slices.DeleteFunc(items, func(s string) bool { return s == v })
		}
	}
	return strings.Join(items, ",")
}
