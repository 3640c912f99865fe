// Package offsets is kgateway's consumer-group offset store: committed
// offsets and a little group metadata, durably in a pebble instance of its
// own (docs/DESIGN.md "Offsets store").
//
// Invariants, cited by number in code and tests:
//
//   - O1 A commit is durable before it is acknowledged: Commit returns only
//     after one synced pebble batch holding every partition of the request.
//   - O2 Offsets are keyed by (group, topic, partition) and carry the
//     offset, leader epoch, metadata string and commit time. They survive
//     restarts and are removed by DeleteGroup, DeleteOffsets and retention
//     (Expire).
//   - O3 Nothing here affects what the ledger keeps or reads: this package
//     imports neither ledger/ nor storage/, and its keyspace is its own
//     pebble directory.
//   - O20 A classic group's membership (leader, members with their
//     protocols, timeouts, static instance ids and assignments) is written
//     with its metadata record in one synced batch (PutClassicGroup), and
//     only then may the group coordinator answer the request that made the
//     change visible. A group without members has no membership record.
//   - O21 A restart keeps every persisted membership (ClassicGroups): only
//     a group recorded as active without one (a crash in its first
//     rebalance) becomes empty at Open. DeleteGroup removes the membership
//     with the offsets.
//
// Retention follows Kafka (KIP-211, offsets.retention.minutes): the offsets
// of a group that uses group management expire once the group has been
// Empty for the retention period; the offsets of a group that only stores
// offsets (no protocol type, e.g. kcat -C with commits, kadm) expire one by
// one, each a retention period after its commit. Offsets of a non-empty
// group never expire.
//
// The package knows nothing of the Kafka wire protocol (it must not import
// kmsg); kafka/group translates requests into calls here.
package offsets
