package kafka

// The GROUP config resource: a group's dynamic configs, the share-group
// configs of Kafka's GroupConfig (share.auto.offset.reset,
// share.record.lock.duration.ms, …), described with DescribeConfigs and
// set with IncrementalAlterConfigs; the share coordinator validates and
// keeps them (durably, in the offset store). Kafka's consumer.* group
// configs (KIP-848) are not known here.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/kafka/share"
	"github.com/kgateway/kgateway/topicconfig"
)

// sourceDynamicGroup is DYNAMIC_GROUP_CONFIG, Kafka's source of a config
// set on a group.
const sourceDynamicGroup topicconfig.Source = 8

func (s *Server) groupConfigs(group string) []topicconfig.Entry {
	c := s.coords().share
	if c == nil { // swapped out since the request was checked
		return nil
	}
	var out []topicconfig.Entry
	for _, e := range c.GroupConfigs(group) {
		ce := topicconfig.Entry{Name: e.Name, Value: e.Value, Source: sourceDynamicGroup, Type: topicconfig.Type(e.Type)}
		if e.IsDefault {
			ce.Source = topicconfig.SourceDefault
		}
		ce.Synonyms = []topicconfig.Synonym{{Name: e.Name, Value: e.Value, Source: ce.Source}}
		out = append(out, ce)
	}
	return out
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
