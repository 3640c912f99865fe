// Package dynconfig keeps the configs an admin changes at run time that
// are not a topic's own: Kafka's dynamic broker configs (the log configs
// that are topic defaults, DynamicBrokerConfig's) and the configs of the
// internal topics.
//
// # Dynamic broker configs
//
// AlterConfigs and IncrementalAlterConfigs on a BROKER resource set a
// broker config for one broker (the resource named by its node id, the
// node layer) or for every broker (the resource "", the default layer).
// Precedence, highest first: the node layer, the default layer, the
// broker's flag (static), Kafka's default. Only the names Dynamic reports
// change (log.retention.ms, message.max.bytes, ...: the ones kgateway's
// topics take as defaults); any other broker config is read-only, as in
// Kafka, and a name kgateway does not describe is refused too. A value is
// checked as the topic config it defaults (CheckBrokerLayer). A change
// takes effect at once: the host resolves every topic's settings again
// over the new layers (Host.ApplyBrokerLayers).
//
// # Internal topic configs
//
// The internal topics (__consumer_offsets, __transaction_state) have
// configs an admin may describe and alter as any topic's: Kafka creates
// each with a few set (the caller's initial set) and keeps what an
// alteration leaves. Their data lives in the offset store, so these
// configs bound nothing: they are kept, validated as a topic's
// (Host.ValidateTopicConfigs) and described.
//
// # Where they live
//
// On a single node Local keeps both in the node's metadata store, under
// resolver/broker-configs (both layers, JSON) and
// resolver/internal-configs/<name> (the explicit configs, JSON, once
// first altered), and applies a change before it returns. The resolver
// reads the layers at Open (LoadLayers), before it resolves any topic.
// In cluster mode the shared catalog (cluster/catalog) keeps them in etcd
// and applies them from its watch, with the same edits and checks
// (EditBrokerLayer, CheckBrokerLayer, Values).
//
// # What it may not touch
//
// It reaches the resolver only through Host, and the store only through
// Meta: it imports storage for the metadata store's types and
// topicconfig for the config vocabulary; never the resolver, a ledger,
// pebble, the cluster, etcd or the wire (layering_test.go).
//
// Invariants: a layer holds only Dynamic names, each with a value its
// topic config accepts; a change is checked whole before anything is
// written, and what is stored is what the host applied (the store is
// written first, then the host told).
package dynconfig
