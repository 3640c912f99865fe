package kafka

// The node's bound on partitions (docs/DESIGN.md "Bounds"): every
// partition is a log with open files and an index, so the partitions of
// all topics together are bounded by partitions.max. CreateTopics,
// CreatePartitions and auto-creation (Metadata) beyond it are
// refused with POLICY_VIOLATION, the code Kafka's own controller answers
// for its partition bounds ("Excessively large number of partitions per
// request"). Who may create at all is the ACLs' (CREATE on the cluster or
// on the topic: a tenant given CREATE on a prefix creates only there).
// Concurrent creations may each pass the check: the bound is exceeded by
// at most one topic per concurrent request.

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// DefaultMaxPartitions is partitions.max.
const DefaultMaxPartitions = 100000

// boundedCatalog is a Catalog whose creations respect partitions.max.
type boundedCatalog struct {
	Catalog
	s *Server
}

func (b boundedCatalog) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error) {
	n := partitions
	if n == -1 {
		n = b.s.res.DefaultPartitions()
	}
	if err := b.room(n); err != nil {
		return resolver.Topic{}, err
	}
	return b.Catalog.CreateTopic(name, partitions, replication, configs, validateOnly)
}

func (b boundedCatalog) EnsureTopic(name string) (resolver.Topic, error) {
	if _, ok := b.s.res.Topic(name); !ok && b.s.res.AutoCreateTopics() {
		if err := b.room(b.s.res.DefaultPartitions()); err != nil {
			return resolver.Topic{}, err
		}
	}
	return b.Catalog.EnsureTopic(name)
}

func (b boundedCatalog) CreatePartitions(name string, count int32, validateOnly bool) error {
	if t, ok := b.s.res.Topic(name); ok && count > t.Partitions {
		if err := b.room(count - t.Partitions); err != nil {
			return err
		}
	}
	return b.Catalog.CreatePartitions(name, count, validateOnly)
}

// room is nil when n more partitions stay within partitions.max.
func (b boundedCatalog) room(n int32) error {
	have := 0
	for _, t := range b.s.res.Topics() {
		have += int(t.Partitions)
	}
	if max := b.s.cfg.MaxPartitions; have+int(n) > max {
		return fmt.Errorf("%w: %d partitions more would exceed partitions.max %d (%d exist)", kerr.PolicyViolation, n, max, have)
	}
	return nil
}
