package topicconfig

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// OpType is an IncrementalAlterConfigs operation. The values are Kafka's.
type OpType int8

const (
	OpSet      OpType = 0
	OpDelete   OpType = 1 // back to the default
	OpAppend   OpType = 2 // list configs only: add items not present
	OpSubtract OpType = 3 // list configs only: remove items
)

func (o OpType) String() string {
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

// Op is one IncrementalAlterConfigs change.
type Op struct {
	Name  string
	Op    OpType
	Value string
}

// Apply returns a copy of set with ops applied in order; every problem is
// reported at once, wrapped in ErrInvalid. APPEND and SUBTRACT start from
// the effective value (the default when not set, as Kafka does) and apply
// only to list configs (cleanup.policy, *.throttled.replicas). The result
// is not validated: Validate it.
func Apply(set map[string]string, broker Broker, ops []Op) (map[string]string, error) {
	out := maps.Clone(set)
	if out == nil {
		out = map[string]string{}
	}
	var errs []error
	for _, op := range ops {
		spec, ok := table[op.Name]
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
			if spec.typ != TypeList {
				errs = append(errs, fmt.Errorf("%s %s: not a list config", op.Op, op.Name))
				continue
			}
			out[op.Name] = editList(Value(out, broker, op.Name), op)
		default:
			errs = append(errs, fmt.Errorf("%s: unknown operation %d", op.Name, int8(op.Op)))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return out, nil
}

// editList appends op's items not already in cur, or removes them.
func editList(cur string, op Op) string {
	items := SplitList(cur)
	for _, v := range SplitList(op.Value) {
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
