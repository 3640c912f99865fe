// Package share is kgateway's share-group coordinator (KIP-932, queues for
// Kafka): membership and assignment (ShareGroupHeartbeat,
// ShareGroupDescribe), share sessions, record acquisition with locks and
// per-record acknowledgement (ShareFetch, ShareAcknowledge), and the
// share-group offsets admin (Describe/Alter/DeleteShareGroupOffsets).
// It also answers for share groups in requests kafka/ dispatches to the
// classic coordinator (OffsetCommitAnswer, ListInto, DeleteGroups: the
// one group-id namespace), names current leaders in cluster
// answers (NameFetchLeaders, NameAckLeaders) and waits for a long poll's
// wake-ups (WaitAny); kafka/ hands in the nodes, the leaders and the
// channels.
//
// Several members may read one partition: each record is acquired by one
// member at a time under a lock, and acknowledged as accepted, released
// (delivered again) or rejected (never again). The share-partition state —
// the start offset (SPSO) and the records in flight after it — is group
// state kept in the offset store (the durable share state), never a cursor of the
// ledger.
//
// Invariants, cited by their names in code and tests:
//
//   - **One acquirer per record.** A record is acquired by at most one
//     member at a time. ShareFetch acquires available records in flight
//     first, then new records past the in-flight end, at most
//     MaxRecords (in batch-optimized mode, ShareAcquireMode 0, past it
//     to the end of the last batch begun: "exceeded for alignment of
//     batch boundaries"), never at or past the high watermark; each acquisition
//     counts one delivery and locks the record for
//     share.record.lock.duration.ms (group config, else
//     group.share.record.lock.duration.ms).
//   - **Share-partition start offset.** The SPSO is the first record
//     not yet finished (acknowledged or archived) and only moves
//     forward, except by AlterShareGroupOffsets or
//     DeleteShareGroupOffsets on an empty group. A partition the group
//     never read starts at share.auto.offset.reset: latest (the high
//     watermark, the default) or earliest (the log start). Records
//     below the log start are dropped from the window.
//   - **In-flight window bound.** The in-flight window (SPSO to the end
//     of what was acquired) holds at most
//     group.share.partition.max.record.locks offsets; while it is full
//     only records in it are acquired, and in batch-optimized mode a
//     batch past its end is begun only when it fits whole, or nothing is
//     in flight before it (fitsLocked). A fetch that finds it full
//     long-polls until an acknowledgement or release moves it, but
//     a fetch that finds nothing to acquire in a partition where its
//     own member holds records (a full window, records promised to
//     others, the high watermark) is answered at once the first time
//     after its member was given records there, and polls ownBlockWait
//     at most after that: clients that acknowledge only after the fetch
//     is answered would otherwise hold the window until MaxWaitMillis
//     (answerHolderLocked). Waiting
//     fetches queue on the partition; a change wakes as many, in order,
//     as the records it freed cover, a wake a fetch does not use passes
//     on, and an acquisition that leaves records acquirable wakes the
//     next (waiters.go). The state write of a change that woke fetches
//     lingers briefly for their acquisitions (writer.go).
//   - **Delivery count limit.** A record whose delivery count has
//     reached group.share.delivery.count.limit is archived instead of
//     made available when released, when its lock expires, or when it
//     is found available at the limit (released at the limit before a
//     restart): it is never delivered again (with a dead-letter queue
//     it is archiving first, below).
//   - **Share-group dead-letter queues.** With share.version 2 and the
//     GROUP config errors.deadletterqueue.topic.name set (KIP-1191), a
//     record rejected or out of deliveries becomes archiving, not
//     archived: its copy (Kafka's __dlq.errors.* headers, the key and
//     value with errors.deadletterqueue.copy.record.enable) is written
//     to the DLQ topic through the ordinary produce path, durably,
//     after the archiving state is durable and before the record is
//     archived (dlq.go). A crash in between writes it again (at least
//     once); a DLQ the group cannot use (Kafka's checks) is skipped and
//     the record archived regardless, as Kafka; a single node's only.
//   - **Releases on lock expiry.** An expired lock releases its record
//     (the delivery count limit applies). A member that leaves, times
//     out or closes its share session releases every record it holds at
//     once.
//   - **Acknowledgement by the lock holder.** An acknowledgement
//     applies only to records acquired by the acknowledging member and
//     still locked; otherwise the partition gets INVALID_RECORD_STATE
//     and nothing of that partition's acknowledgements is applied.
//     Accept finishes a record, reject and gap archive it, release
//     makes it available (the delivery count limit), renew (v2
//     IsRenewAck) extends its lock.
//   - **Locks released at restart.** After a restart every record that
//     was acquired is available, with the delivery count it had
//     (acquisitions persisted as available); members, sessions and
//     locks are not kept (clients rejoin, as after any coordinator
//     move).
//   - **Share bounds.** What a client controls is bounded: members per
//     group (group.share.max.size, GROUP_MAX_SIZE_REACHED), share
//     sessions in total (group.share.max.share.sessions,
//     SHARE_SESSION_LIMIT_REACHED, and as much per principal and per
//     connection, .per.principal and .per.connection), partitions per
//     session (maxSessionPartitions), acknowledgement batches per
//     partition (maxAckBatches) and the offsets of one batch (the
//     in-flight bound), records in flight per partition (the in-flight
//     window bound).
//   - **Cursorless share reads.** Reads are cursorless (ledger R1):
//     ShareFetch reads with the resolver's ordinary Fetch from the
//     offset the share state names; nothing here writes to the ledger
//     or keeps a read position in it. Share state is written only to
//     the offset store.
//   - **One group-id namespace.** Share groups share the group-id
//     namespace with classic and consumer groups (Namespace): a share
//     request for an id taken by another type answers
//     GROUP_ID_NOT_FOUND and creates nothing; the other coordinators
//     answer GROUP_ID_NOT_FOUND for a share group's id
//     (kafka/groups.go).
//   - **Share member epochs.** A member is identified by its
//     client-generated id and fenced by its epoch: a heartbeat must
//     carry the member's current or previous epoch
//     (FENCED_MEMBER_EPOCH). A member silent for the session timeout is
//     removed (releases on lock expiry). A heartbeat or describe shows
//     a group epoch only once its record is durable (it rides the
//     share-state group commit). With authorization on, a
//     member is bound to the principal that joined it: a heartbeat,
//     ShareFetch or ShareAcknowledge of another principal under its id
//     is UNKNOWN_MEMBER_ID. A ShareFetch or ShareAcknowledge of a
//     member id no live member has is UNKNOWN_MEMBER_ID too (a close,
//     epoch -1, excepted), as Kafka; a cluster's leader side, which
//     does not know the membership, takes member ids on trust.
//   - **Share assignment.** Assignment is computed by the coordinator
//     whenever members, subscriptions or partition counts change,
//     bumping the group epoch: each subscribed partition goes to at
//     least one member, and with more members than partitions several
//     members share one.
//   - **Share session epochs.** A share session's epoch advances by one
//     with every ShareFetch and ShareAcknowledge; a request with
//     another epoch gets INVALID_SHARE_SESSION_EPOCH, one without a
//     session SHARE_SESSION_NOT_FOUND, and changes nothing. Epoch 0
//     opens a new session (and may carry no acknowledgements), -1
//     closes it.
//
// # Cluster mode
//
// With Config.States set (a cluster), the work is split as Kafka splits
// it: the group coordinator node (NewCoordinator over its mirrored
// offset store) serves membership, assignment and the offsets admin; every
// node's leader side (NewLeader) serves ShareFetch and ShareAcknowledge for
// the partitions it leads.
//
//   - **Share states outside the offsets store.** In cluster mode the
//     share-partition states are in States, one durable record per
//     group and partition (cluster/sharestate: etcd, fenced share-state
//     writes and the share-state admin reset), never in an offset
//     store; the coordinator's store keeps the group records, epochs
//     and group configs as on a single node.
//   - **Leader side.** A leader side serves the partitions this node
//     leads (States.Serving); another partition answers
//     NOT_LEADER_OR_FOLLOWER in ShareFetch and ShareAcknowledge. Share
//     sessions and locks are per node. A leader does not check
//     membership, as Kafka's brokers do not: members learn their
//     partitions from the coordinator's assignment.
//   - **Leader writes before answers.** A leader's change of a
//     partition's state is written with States.Put before it is
//     answered, under the leader epoch and the version it read or last
//     wrote; a write refused (fenced, or the state changed under it) or
//     of unknown outcome makes the cached state dead: the request's
//     partition answers NOT_LEADER_OR_FOLLOWER and the next use reads
//     the durable state again.
//   - **Re-reading after a leader change.** A leader reads the durable
//     state when it first serves a group's partition, when its leader
//     epoch changed since it read it, and after a failed write.
//     Acquisitions made under another leadership are never honoured:
//     the durable state has those records available with their delivery
//     counts (acquisitions persisted as available, locks released at
//     restart), so the next acquisition delivers them with the count
//     one higher, and an acknowledgement of them answers
//     INVALID_RECORD_STATE.
//   - **Admin on leaders' states.** The coordinator's offsets admin
//     acts on the leaders' durable states: DescribeShareGroupOffsets
//     reads them (the lag is -1 for a partition the coordinator does
//     not lead: it has no bounds for it), Alter and Delete on an empty
//     group reset them (States.Reset, which every leader's next Put
//     finds changed). A leader trusts a cached state for at most
//     revalidateEvery (1 s) before reading its version again, so it
//     serves a reset state even with nothing to write. A read that
//     returns a version older than the cached one raced the leader's
//     own later write and is ignored: that write was conditional on the
//     version before it, so nobody else wrote in between.
//   - **Releases at the leader.** A member's records on a leader are
//     released when its share session there closes (epoch -1 or its
//     connection closing) or has been idle past
//     group.share.session.timeout.ms (closed by the next session opened
//     on that node), and by lock expiry (releases on lock expiry); a
//     member the coordinator removes reaches the leaders only so, as in
//     Kafka. A leader side forgets, when it holds
//     group.share.max.share.sessions groups, those with no session:
//     their states are durable (the share bounds).
//   - **Read-committed share groups.** A group with
//     share.isolation.level=read_committed (a GROUP config) acquires
//     nothing at or past the partition's last stable offset, and
//     archives the records of aborted transactions as it meets them
//     (they are never delivered), as Kafka's SharePartition;
//     read_uncommitted (the default) reads up to the high watermark.
//     Transaction markers are archived at either level.
//
// Left out: errors.deadletterqueue.auto.create.topics.enable (Kafka's
// default, off, is served) and errors.deadletterqueue.topic.name.prefix
// (fixed at Kafka's default, dlq.), dead-letter queues in cluster mode,
// by_duration reset, a
// persisted membership (members rejoin after a restart, locks released at restart), the
// SimpleAssignor's rack awareness and stickiness, and share.* group
// configs other than those in configs.go. The group-id namespace is
// checked when a group is created: a classic and a share group created at
// the same instant under one id are not serialized against each other.
// Share state is keyed by topic name; a state past the high watermark (a
// deleted and recreated topic) starts over (the share-partition start offset). In cluster mode: the
// lag DescribeShareGroupOffsets reports is -1 for partitions the
// coordinator does not lead; a group's configs are described only by the
// coordinator (others show none); a leader takes a group's configs from
// the coordinator's mirror up to a second late; the group-id namespace
// (one group-id namespace) is checked by the coordinator only (a leader does not check
// membership, the leader side).
package share
