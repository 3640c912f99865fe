package telemetry

import (
	"fmt"

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

// ApplyOps returns a copy of cur with ops applied in order: SET and
// DELETE. APPEND and SUBTRACT are INVALID_CONFIG on every client-metrics
// config, lists included, as in Kafka 4.4 (its config schema knows no
// client-metrics list). The result is validated by Store.Alter.
func ApplyOps(cur map[string]string, ops []ConfigOp) (map[string]string, error) {
	out := clone(cur)
	for _, op := range ops {
		switch op.Op {
		case OpSet:
			out[op.Name] = op.Value
		case OpDelete:
			delete(out, op.Name)
		case OpAppend, OpSubtract:
			return nil, fmt.Errorf("%w: can't APPEND or SUBTRACT %s: client metrics configs take SET and DELETE", kerr.InvalidConfig, op.Name)
		default:
			return nil, fmt.Errorf("%w: unknown operation %d on %q", kerr.InvalidRequest, op.Op, op.Name)
		}
	}
	return out, nil
}
