package config

import (
	"context"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/topicconfig"
)

// Cluster is the front end's view of the other nodes when kgateway runs as
// one node of several (Config.Cluster). Nil: a single node, which leads
// every partition and coordinates every group and transactional id.
//
// Every method but VerifyTxn and AddTxnPartition answers from memory (a
// watch keeps it current) and never blocks on the network: the front end
// calls them on every request; those two only for a transactional batch
// its leader does not know registered.
type Cluster interface {
	// Brokers are the live nodes, this one included, in node id order.
	Brokers() []Broker
	// Leader is the node serving the partition now and its leader epoch
	// (the ownership's fencing epoch). ok is false while the partition has
	// no owner (a handover or a failover is under way).
	Leader(topic string, partition int32) (node int32, epoch int32, ok bool)
	// Coordinator is the node that coordinates groups and transactional
	// ids now; ok is false while none does.
	Coordinator() (node int32, ok bool)
	// VerifyTxn reports whether the transaction coordinator registered
	// the partition in producer pid's transaction at epoch, and if so
	// applies the registration here (verification across nodes); the front end asks when the
	// resolver refuses a transactional batch as not registered.
	VerifyTxn(ctx context.Context, topic string, partition int32, pid int64, epoch int16) (bool, error)
	// AddTxnPartition has the transaction coordinator, wherever it
	// runs, add the partition led here to the transaction of id (KIP-890
	// implicit adds, across nodes) and returns its answer, a Kafka error
	// code; an error when none came. The front end asks for a Produce
	// v12+ transactional batch that VerifyTxn did not find registered.
	AddTxnPartition(ctx context.Context, id, topic string, partition int32, pid int64, epoch int16) (int16, error)
	// Catalog is where topic changes go: the shared catalog, whose changes
	// every node's resolver applies. Its methods return once this node's
	// resolver has applied the change.
	Catalog() Catalog
}

// Broker is one node as Metadata, FindCoordinator and DescribeCluster
// describe it.
type Broker struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string
}

// Catalog is the set of topic changes the front end makes. The resolver
// implements it for a single node; in a cluster the shared catalog does.
type Catalog interface {
	CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (resolver.Topic, error)
	EnsureTopic(name string) (resolver.Topic, error)
	DeleteTopic(name string) error
	CreatePartitions(name string, count int32, validateOnly bool) error
	AlterTopicConfigs(name string, configs map[string]string, validateOnly bool) error
	IncrementalAlterTopicConfigs(name string, ops []topicconfig.Op, validateOnly bool) error
}

var _ Catalog = (*resolver.Resolver)(nil)
