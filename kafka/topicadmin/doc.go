// Package topicadmin is what CreateTopics, CreatePartitions and topic
// auto-creation check before the catalog acts: legal topic names
// (ValidName), a name listed twice in one request (Repeated), manual
// replica assignments and null config values (Create), counts that do
// not grow a topic (Grow), and the node's partition bounds (Bounded:
// partitions.max, and with an authorizer partitions.max.per.principal,
// counted against each topic's creator; docs/DESIGN.md "Bounds").
//
// It sees topics only through the catalog a request's changes go to
// (kafka/config.Catalog: the resolver, or the cluster's shared catalog)
// and the Topics it reads; it may import resolver's types, kafka/config,
// kafka/tenancy and the wire types, nothing else. Who may create
// (ACLs), the controller_mutation_rate quota and the answers are kafka/'s.
package topicadmin
