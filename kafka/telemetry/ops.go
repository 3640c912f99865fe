package telemetry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The IncrementalAlterConfigs operations (Kafka's AlterConfigOp.OpType).
const (
	OpSet      int8 = 0
	OpDelete   int8 = 1
	OpAppend   int8 = 2
	OpSubtract int8 = 3
)

// ConfigOp is one IncrementalAlterConfigs operation on a config.
type ConfigOp struct {
	Name  string
	Op    int8
	Value string
}

// ApplyOps returns a copy of cur with ops applied in order. APPEND adds
// the listed values not yet in the list, SUBTRACT removes them; on a
// config that is not a list they are INVALID_CONFIG, as in Kafka. The
// result is validated by Store.Alter.
func ApplyOps(cur map[string]string, ops []ConfigOp) (map[string]string, error) {
	out := clone(cur)
	for _, op := range ops {
		switch op.Op {
		case OpSet:
			out[op.Name] = op.Value
		case OpDelete:
			delete(out, op.Name)
		case OpAppend, OpSubtract:
			if !IsList(op.Name) {
				return nil, fmt.Errorf("%w: can't APPEND or SUBTRACT %s: its type is not LIST", kerr.InvalidConfig, op.Name)
			}
			items, err := parseList(op.Name, out[op.Name])
			if err != nil {
				return nil, err
			}
			vals, err := parseList(op.Name, op.Value)
			if err != nil {
				return nil, err
			}
			for _, v := range vals {
				has := slices.Contains(items, v)
				switch {
				case op.Op == OpAppend && !has:
					items = append(items, v)
				case op.Op == OpSubtract && has:
					items = slices.DeleteFunc(items, func(s string) bool { return s == v })
				}
			}
			out[op.Name] = strings.Join(items, ",")
			if len(items) == 0 && op.Op == OpSubtract {
				out[op.Name] = ""
			}
		default:
			return nil, fmt.Errorf("%w: unknown operation %d on %q", kerr.InvalidRequest, op.Op, op.Name)
		}
	}
	return out, nil
}
