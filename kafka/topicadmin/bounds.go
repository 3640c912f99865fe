package topicadmin

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

	"github.com/kgateway/kgateway/kafka/config"
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

// Topics is the topic catalog as the bounds read it (*resolver.Resolver).
type Topics interface {
	Topic(name string) (resolver.Topic, bool)
	Topics() []resolver.Topic
	DefaultPartitions() int32
	AutoCreateTopics() bool
}

// Bounded is a Catalog whose creations respect partitions.max (Max) and,
// for Principal ("" without an authorizer), partitions.max.per.principal
// (PerPrincipal). Topics is what exists.
type Bounded struct {
	config.Catalog
	Topics            Topics
	Max, PerPrincipal int
	Principal         string
}

func (b Bounded) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error) {
	n := partitions
	if n == -1 {
		n = b.Topics.DefaultPartitions()
	}
	if err := b.Room(n, b.Principal); err != nil {
		return resolver.Topic{}, err
	}
	if c, ok := b.Catalog.(creatingCatalog); ok {
		return c.CreateTopicBy(b.Principal, name, partitions, replication, configs, validateOnly)
	}
	return b.Catalog.CreateTopic(name, partitions, replication, configs, validateOnly)
}

func (b Bounded) EnsureTopic(name string) (resolver.Topic, error) {
	if _, ok := b.Topics.Topic(name); !ok && b.Topics.AutoCreateTopics() {
		if err := b.Room(b.Topics.DefaultPartitions(), b.Principal); err != nil {
			return resolver.Topic{}, err
		}
	}
	if c, ok := b.Catalog.(creatingCatalog); ok {
		return c.EnsureTopicBy(b.Principal, name)
	}
	return b.Catalog.EnsureTopic(name)
}

// CreatePartitions counts new partitions against the topic's creator,
// whoever adds them (a principal allowed to ALTER the topic): a tenant's
// topics stay within its bound.
func (b Bounded) CreatePartitions(name string, count int32, validateOnly bool) error {
	if t, ok := b.Topics.Topic(name); ok && count > t.Partitions {
		owner := ""
		if b.Principal != "" {
			owner = t.Creator
		}
		if err := b.Room(count-t.Partitions, owner); err != nil {
			return err
		}
	}
	return b.Catalog.CreatePartitions(name, count, validateOnly)
}

// Room is nil when n more partitions stay within partitions.max, and
// within principal's partitions.max.per.principal.
func (b Bounded) Room(n int32, principal string) error {
	topics := b.Topics.Topics()
	have := 0
	for _, t := range topics {
		have += int(t.Partitions)
	}
	if max := b.Max; have+int(n) > max {
		return fmt.Errorf("%w: %d partitions more would exceed partitions.max %d (%d exist)", kerr.PolicyViolation, n, max, have)
	}
	return tenancy.PartitionRoom(principal, n, b.PerPrincipal, topics)
}
