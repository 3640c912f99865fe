// Package offsets is kgateway's consumer-group offset store: committed
// offsets and a little group metadata, plus the transaction coordinator's
// state and pending transactional offsets, durably in a pebble instance of its
// own (docs/DESIGN.md "Offsets store").
//
// Invariants, cited by number in code and tests:
//
//   - O1 A commit is durable before it is acknowledged: Commit returns only
//     after one synced pebble batch holding every partition of the request
//     (with Options.MirrorDurable, once the mirror holds that batch: O8).
//   - O2 Offsets are keyed by (group, topic, partition) and carry the
//     offset, leader epoch, metadata string and commit time. They survive
//     restarts and are removed by DeleteGroup, DeleteOffsets and retention
//     (Expire).
//   - O3 Nothing here affects what the ledger keeps or reads: this package
//     imports neither ledger/ nor storage/, and its keyspace is its own
//     pebble directory.
//   - O4 A transaction's state (kafka/txn: producer id and epoch, Kafka's
//     state, partitions, groups, timeout, start and update times) is one
//     record per transactional id, written durably (PutTxn: synced, or in
//     the mirror with Options.MirrorDurable, O8) before the coordinator
//     acts on it.
//   - O5 TxnOffsetCommit offsets are pending: durable when PutPending
//     returns, kept apart from committed offsets, and invisible to Get,
//     GroupOffsets, HasGroup and retention until their transaction commits.
//     DeleteGroup and DeleteOffsets drop the pending offsets of every
//     transaction for the group or partitions they delete, in the same
//     synced batch as the committed offsets (see below).
//   - O6 EndTxn moves a transaction's pending offsets to committed (commit)
//     or drops them (abort), and records its completed state, in one synced
//     pebble batch: after a crash either all of it happened or none of it.
//     A second EndTxn finds nothing pending and moves nothing. The
//     transaction coordinator answers the client's EndTxn once the
//     decision is durable (O4), before this batch (kafka/txn, answer
//     once decided), and a crash in between is completed at open: until
//     the batch is applied the offsets are pending (O5), so an
//     OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for
//     them (O7) and one without reads the offset committed before, as
//     Kafka answers until its marker on __consumer_offsets is written.
//     Every commit and pending commit carries its write position
//     (increasing within a run, and past earlier runs' by the wall clock);
//     a commit makes a pending offset the committed one only if no
//     committed offset of the partition was written after it:
//     TxnOffsetCommit(10), OffsetCommit(20), EndTxn(commit) leaves 20, as
//     Kafka keeps the most recent commit by log position.
//   - O7 PendingPartitions answers which partitions of a group have a
//     pending offset of any transaction, so OffsetFetch with require_stable
//     can refuse them (UNSTABLE_OFFSET_COMMIT).
//   - O8 With Options.Mirror set, every synced write of the store (each
//     batch above, and Open's own) is first given to Mirror, then
//     applied locally. Writes that queue behind one another are a group:
//     Mirror is given one batch holding the group's batches in the
//     order of application (bounded by Options.MirrorGroupEntries and
//     MirrorGroupBytes), and that very batch is then applied with one
//     sync. One group at a time, so Mirror sees every batch in the order
//     of application. If Mirror fails, every write of the group fails
//     and nothing of the group is applied locally. No write is
//     acknowledged before its group is both mirrored and synced locally;
//     a group Mirror took whose local apply then fails is not
//     acknowledged (O1) but may be visible to whoever restores from the
//     mirror. The one exception to the local sync: with
//     Options.MirrorDurable the mirror is the store's one durable copy
//     (the directory is never opened again; cluster mode restores a
//     fresh store from etcd at every acquisition of the coordinator
//     role), so a group is acknowledged once mirrored and applied
//     locally without a sync.
//   - **Durable classic membership.** A classic group's membership
//     (leader, members with their protocols, timeouts, static instance
//     ids and assignments) is written with its metadata record in one
//     synced batch (PutClassicGroup), and only then may the group
//     coordinator answer the request that made the change visible. A
//     group without members has no membership record.
//   - **Memberships kept across restarts.** A restart keeps every
//     persisted membership (ClassicGroups): only a group recorded as
//     active without one (a crash in its first rebalance) becomes empty
//     at Open. DeleteGroup removes the membership with the offsets.
//   - **Durable consumer group state.** A consumer group's state
//     (KIP-848: group and assignment epochs, assignor, subscribed
//     topics' metadata, members with epochs, subscriptions, assigned,
//     revoking and target partitions) is one record written with the
//     group's metadata record in one synced batch (PutConsumerGroup); a
//     group id has one type, so writing one type's state removes the
//     other's in the same batch.
//   - **Consumer group state kept across restarts.** A restart keeps
//     every consumer group's state (ConsumerGroups), with or without
//     members; DeleteGroup and retention of the group remove it.
//   - Streams groups: a streams group's state (KIP-1071: the coordinator's encoding of
//     epochs, topology, members with their tasks, and the target) is one
//     record written with the group's metadata record in one synced batch
//     (PutStreamsGroup); it removes a classic or consumer state of the
//     same id, and theirs remove it.
//     A restart keeps every streams group's state (StreamsGroups);
//     DeleteGroup and retention of the group remove it.
//   - **Durable share-partition state.** A share-partition state
//     (kafka/share: the share-partition start offset and the records in
//     flight after it, as runs of state and delivery count) is written
//     in one synced batch (PutShareState) before the share coordinator
//     answers the request that changed it: an acquisition before the
//     records are sent, an acknowledgement before it is confirmed.
//   - **Acquisitions persisted as available.** Acquired is never
//     persisted: a record acquired when its partition's state was
//     written is written as available with its delivery count (the
//     acquisition counted), so after a crash or restart every lock that
//     was held is released and no delivery is forgotten.
//   - **Share group record.** A share group's record (PutShareGroup)
//     marks its id as a share group's, across restarts, until
//     DeleteShareGroup removes it with all its share-partition states
//     and its group configs in one synced batch.
//   - **Share state is group state.** Share state is group state only:
//     it is read by the share coordinator and never by a read of the
//     log, and writing it touches nothing but this store's keyspace
//     (O3). Reads of the log stay cursorless (ledger R1).
//
// Deleting a group (DeleteGroup) or some of its offsets (DeleteOffsets)
// removes, in one synced batch, the committed offsets and the pending
// offsets of every transaction for them, as Kafka's tombstones on
// __consumer_offsets drop both (its DeleteGroups and OffsetDelete write
// one for every partition with a committed or a pending offset; neither
// is refused for pending offsets). A transaction that ends afterwards,
// including one whose commit was answered before the deletion and whose
// batch (O6) comes after it, commits nothing for them, so a deleted group
// does not come back; offsets it commits to the group after the deletion
// are its own again. The deletion and EndTxn exclude each other, so a
// crash leaves the deletion whole or not at all and a later completion
// finds nothing of it to move. Retention leaves pending offsets to their
// transaction (DeleteTxn drops those of an expired transactional id), and,
// as Kafka does, keeps an expired committed offset, and its group, while a
// transaction has a pending offset for that partition, and a group while
// any transaction has a pending offset for it.
//
// Retention follows Kafka (KIP-211, offsets.retention.minutes): the offsets
// of a group that uses group management expire once the group has been
// Empty for the retention period; the offsets of a group that only stores
// offsets (no protocol type, e.g. kcat -C with commits, kadm) expire one by
// one, each a retention period after its commit. Offsets of a non-empty
// group never expire; a group stored as empty that the caller reports
// active (ExpireUnless: it started a rebalance, which is not written) is
// non-empty.
//
// The package knows nothing of the Kafka wire protocol (it must not import
// kmsg); kafka/group translates requests into calls here.
package offsets
