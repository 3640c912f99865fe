// Package logoffsets answers the APIs that ask a partition's log for an
// offset: ListOffsets (key 2: by timestamp, or latest, earliest, ...,
// under either isolation level) and OffsetForLeaderEpoch (key 23: where
// a leader epoch ends). The version rules and answers are on List and
// EpochEnds' files.
//
// What it may not touch: the resolver, the cluster or the connection.
// kafka/ hands it the partitions through Log (existence, routing and
// current-epoch checks, the log's bounds and timestamp lookups, and the
// Kafka code of their errors) and authorizes the request first.
package logoffsets
