// Package brokerlogger serves the BROKER_LOGGER config resources
// (KIP-412): the loggers of this node (package logging) and their
// levels, described by DescribeConfigs and changed by
// IncrementalAlterConfigs, with Kafka's rules and wording.
//
// The resource is this node, named by its node id: node-local in cluster
// mode as in Kafka (another id is INVALID_REQUEST). DescribeConfigs lists
// every logger with its effective level, source DYNAMIC_BROKER_LOGGER_CONFIG,
// writable and without synonyms. IncrementalAlterConfigs SETs a level
// (TRACE, DEBUG, INFO, WARN, ERROR, FATAL; case matters) or DELETEs a
// logger's own level so it inherits again; the root's cannot be deleted,
// APPEND and SUBTRACT are refused, a logger that does not exist or a
// level that is none of those is INVALID_CONFIG. The whole resource is
// validated before any change is made. Levels set at run time are not
// kept across restarts, as in Kafka. AlterConfigs does not serve this
// resource type (Kafka answers "Unknown resource type 8").
//
// It imports logging, topicconfig (the entry a handler encodes) and the
// wire types; never kafka/ itself.
package brokerlogger
