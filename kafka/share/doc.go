// Package share is kgateway's share-group coordinator (KIP-932, queues for
// Kafka): membership and assignment (ShareGroupHeartbeat,
// ShareGroupDescribe), share sessions, record acquisition with locks and
// per-record acknowledgement (ShareFetch, ShareAcknowledge), and the
// share-group offsets admin (Describe/Alter/DeleteShareGroupOffsets).
//
// Several members may read one partition: each record is acquired by one
// member at a time under a lock, and acknowledged as accepted, released
// (delivered again) or rejected (never again). The share-partition state —
// the start offset (SPSO) and the records in flight after it — is group
// state kept in the offset store (offsets O30–O33), never a cursor of the
// ledger.
//
// Invariants, cited as Q1… in code and tests:
//
//	Q1  A record is acquired by at most one member at a time. ShareFetch
//	    acquires available records in flight first, then new records past
//	    the in-flight end, at most MaxRecords, never at or past the high
//	    watermark; each acquisition counts one delivery and locks the record
//	    for share.record.lock.duration.ms (group config, else
//	    group.share.record.lock.duration.ms).
//	Q2  The SPSO is the first record not yet finished (acknowledged or
//	    archived) and only moves forward, except by AlterShareGroupOffsets
//	    or DeleteShareGroupOffsets on an empty group. A partition the group
//	    never read starts at share.auto.offset.reset: latest (the high
//	    watermark, the default) or earliest (the log start). Records below
//	    the log start are dropped from the window.
//	Q3  The in-flight window (SPSO to the end of what was acquired) holds
//	    at most group.share.partition.max.record.locks offsets; while it is
//	    full only records in it are acquired.
//	Q4  A record whose delivery count has reached
//	    group.share.delivery.count.limit is archived instead of made
//	    available when released, when its lock expires, or when it is
//	    found available at the limit (released at the limit before a
//	    restart): it is never delivered again.
//	Q5  An expired lock releases its record (Q4 applies). A member that
//	    leaves, times out or closes its share session releases every record
//	    it holds at once.
//	Q6  An acknowledgement applies only to records acquired by the
//	    acknowledging member and still locked; otherwise the partition gets
//	    INVALID_RECORD_STATE and nothing of that partition's
//	    acknowledgements is applied. Accept finishes a record, reject and
//	    gap archive it, release makes it available (Q4), renew (v2
//	    IsRenewAck) extends its lock.
//	Q7  After a restart every record that was acquired is available, with
//	    the delivery count it had (O31); members, sessions and locks are not
//	    kept (clients rejoin, as after any coordinator move).
//	Q8  What a client controls is bounded: members per group
//	    (group.share.max.size, GROUP_MAX_SIZE_REACHED), share sessions in
//	    total (group.share.max.share.sessions, SHARE_SESSION_LIMIT_REACHED),
//	    partitions per session (maxSessionPartitions), acknowledgement
//	    batches per partition (maxAckBatches) and the offsets of one batch
//	    (the in-flight bound), records in flight per partition (Q3).
//	Q9  Reads are cursorless (ledger R1): ShareFetch reads with the
//	    resolver's ordinary Fetch from the offset the share state names;
//	    nothing here writes to the ledger or keeps a read position in it.
//	    Share state is written only to the offset store.
//	Q10 Share groups share the group-id namespace with classic and consumer
//	    groups (Namespace): a share request for an id taken by another type
//	    answers GROUP_ID_NOT_FOUND and creates nothing; the other
//	    coordinators answer GROUP_ID_NOT_FOUND for a share group's id
//	    (kafka/groups.go).
//	Q11 A member is identified by its client-generated id and fenced by its
//	    epoch: a heartbeat must carry the member's current or previous
//	    epoch (FENCED_MEMBER_EPOCH). A member silent for the session timeout
//	    is removed (Q5).
//	Q12 Assignment is computed by the coordinator whenever members,
//	    subscriptions or partition counts change, bumping the group epoch:
//	    each subscribed partition goes to at least one member, and with
//	    more members than partitions several members share one.
//	Q13 A share session's epoch advances by one with every ShareFetch and
//	    ShareAcknowledge; a request with another epoch gets
//	    INVALID_SHARE_SESSION_EPOCH, one without a session
//	    SHARE_SESSION_NOT_FOUND, and changes nothing. Epoch 0 opens a new
//	    session (and may carry no acknowledgements), -1 closes it.
//
// Left out: share.isolation.level read_committed, by_duration reset, a
// persisted membership (members rejoin after a restart, Q7), the
// SimpleAssignor's rack awareness and stickiness, and share.* group
// configs other than those in configs.go. The group-id namespace is
// checked when a group is created: a classic and a share group created at
// the same instant under one id are not serialized against each other.
// Share state is keyed by topic name; a state past the high watermark (a
// deleted and recreated topic) starts over (Q2).
package share
