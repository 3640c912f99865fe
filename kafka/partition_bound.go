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
//
// With an authorizer each principal's partitions are also bounded by
// partitions.max.per.principal (kafka/tenancy.PartitionRoom): the catalog
// records who created each topic (creatingCatalog), and the partitions of
// the topics a principal created count against it.

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/tenancy"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
)

// creatingCatalog is a Catalog that records the principal creating a
// topic in the topic's record (resolver.Topic.Creator): the resolver,
// and the cluster catalog.
type creatingCatalog interface {
	CreateTopicBy(creator, name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error)
	EnsureTopicBy(creator, name string) (resolver.Topic, error)
}

// boundedCatalog is a Catalog whose creations respect partitions.max and,
// for the request's principal (tenantOf; "" without an authorizer),
// partitions.max.per.principal.
type boundedCatalog struct {
	Catalog
	s         *Server
	principal string
}

func (b boundedCatalog) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error) {
	n := partitions
	if n == -1 {
		n = b.s.res.DefaultPartitions()
	}
	if err := b.room(n, b.principal); err != nil {
		return resolver.Topic{}, err
	}
	if c, ok := b.Catalog.(creatingCatalog); ok {
		return c.CreateTopicBy(b.principal, name, partitions, replication, configs, validateOnly)
	}
	return b.Catalog.CreateTopic(name, partitions, replication, configs, validateOnly)
}

func (b boundedCatalog) EnsureTopic(name string) (resolver.Topic, error) {
	if _, ok := b.s.res.Topic(name); !ok && b.s.res.AutoCreateTopics() {
		if err := b.room(b.s.res.DefaultPartitions(), b.principal); err != nil {
			return resolver.Topic{}, err
		}
	}
	if c, ok := b.Catalog.(creatingCatalog); ok {
		return c.EnsureTopicBy(b.principal, name)
	}
	return b.Catalog.EnsureTopic(name)
}

// CreatePartitions counts new partitions against the topic's creator,
// whoever adds them (a principal allowed to ALTER the topic): a tenant's
// topics stay within its bound.
func (b boundedCatalog) CreatePartitions(name string, count int32, validateOnly bool) error {
	if t, ok := b.s.res.Topic(name); ok && count > t.Partitions {
		owner := ""
		if b.principal != "" {
			owner = t.Creator
		}
		if err := b.room(count-t.Partitions, owner); err != nil {
			return err
		}
	}
	return b.Catalog.CreatePartitions(name, count, validateOnly)
}

// room is nil when n more partitions stay within partitions.max, and
// within principal's partitions.max.per.principal.
func (b boundedCatalog) room(n int32, principal string) error {
	topics := b.s.res.Topics()
	have := 0
	for _, t := range topics {
		have += int(t.Partitions)
	}
	if max := b.s.cfg.MaxPartitions; have+int(n) > max {
		return fmt.Errorf("%w: %d partitions more would exceed partitions.max %d (%d exist)", kerr.PolicyViolation, n, max, have)
	}
	return tenancy.PartitionRoom(principal, n, b.s.cfg.MaxPartitionsPerPrincipal, topics)
}
