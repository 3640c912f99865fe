package kafka

// The GROUP config resource: a group's dynamic configs, the share-group
// configs of Kafka's GroupConfig (share.auto.offset.reset,
// share.record.lock.duration.ms, …) and its KIP-848 consumer configs
// (consumer.session.timeout.ms, consumer.heartbeat.interval.ms, which
// the group coordinator reads), described with DescribeConfigs and set
// with IncrementalAlterConfigs; the share coordinator validates and keeps
// them (durably, in the offset store).

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/topicconfig"
)

func (s *Server) groupConfigs(group string) []topicconfig.Entry {
	if c := s.coords().share; c != nil { // else swapped out since the request was checked
		return c.GroupConfigs(group)
	}
	return nil
}

// groupConfig is a group's dynamic config for the group coordinator
// (group.Config.GroupConfig): "" when unset or without a share coordinator.
func (s *Server) groupConfig(group, name string) string {
	if c := s.coords(); c != nil && c.share != nil {
		return c.share.GroupConfig(group, name)
	}
	return ""
}

func (s *Server) alterGroupConfigs(group string, ops []topicconfig.Op, validateOnly bool) error {
	conv := make([]share.ConfigOp, len(ops))
	for i, op := range ops {
		conv[i] = share.ConfigOp{Name: op.Name, Op: int8(op.Op), Value: op.Value}
	}
	if !s.isCoordinator() { // Group configs at the coordinator: only the coordinator's store keeps them
		return fmt.Errorf("%w: group %q", kerr.NotCoordinator, group)
	}
	c := s.coords().share
	if c == nil { // swapped out since the request was checked
		return fmt.Errorf("%w: group %q", kerr.CoordinatorNotAvailable, group)
	}
	return c.AlterGroupConfigs(group, conv, validateOnly)
}
