// Package logging gives kgateway's zap loggers run-time levels, the way
// Kafka's broker loggers (BROKER_LOGGER config resources, KIP-412) give
// log4j's.
//
// A Registry wraps one zap core (the output: encoder and writer, built to
// let every level through) and filters each entry by the level of the
// logger that wrote it, found by the entry's logger name: the name a
// logger was given with Named ("kafka", "kafka.group", "cluster.etcd").
// A logger has a level of its own once one is set, else it inherits its
// nearest registered ancestor's (dotted names, as log4j's hierarchy),
// and every chain ends at the root logger, which always has one. Which
// loggers exist is the set registered: those made with Named (this
// package's, not zap's) on a registry's logger, and the root.
//
// Levels are Kafka's names: TRACE (zap has no trace level: zap's debug),
// DEBUG, INFO, WARN, ERROR and FATAL. Levels set at run time live in
// memory only: a restart is back to the configured root level, as in
// Kafka.
//
// Invariant: a log call pays for the per-logger lookup only when its
// level is at or above the lowest level any logger has (Enabled answers
// from one atomic load), so debug calls on a registry whose loggers are
// all at INFO cost what they cost with a plain zap core.
//
// It imports zap only.
package logging
