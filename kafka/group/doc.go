// Package group is kgateway's group coordinator: the classic Kafka consumer
// group protocol (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, DescribeGroups, ListGroups, DeleteGroups) and the offset APIs
// (OffsetCommit, OffsetFetch, OffsetDelete) over the offsets store. This
// node coordinates every group.
//
// A group moves through Kafka's states:
//
//	Empty -> PreparingRebalance -> CompletingRebalance -> Stable
//	   ^            ^  |                  |                |
//	   |            |  +-- no members -----+                |
//	   +------------+---- join / leave / expiry / leader rejoin
//
// and Dead once deleted or expired. Invariants, cited by their names in code:
//
//   - **Kafka's group error order.** Errors are the ones Kafka's
//     GroupCoordinator returns, in the same order of checks (Dead ->
//     COORDINATOR_NOT_AVAILABLE, fenced static member ->
//     FENCED_INSTANCE_ID, unknown member -> UNKNOWN_MEMBER_ID, wrong
//     generation -> ILLEGAL_GENERATION, then the state's answer).
//   - **Rebalance completion.** A rebalance completes when every known
//     member has rejoined and no member id handed out with
//     MEMBER_ID_REQUIRED is still outstanding, or when the rebalance
//     timeout (the largest of the members') fires; members that did not
//     rejoin by then are removed. The first rebalance of an Empty group
//     instead completes only when group.initial.rebalance.delay.ms
//     passes without a new member joining, or when the rebalance
//     timeout is used up (Kafka's InitialDelayedJoin); member ids
//     handed out and not back do not hold it up. With a delay of 0 the
//     wait is a check run once the group's lock is free again, so the
//     joins already waiting for the lock are in the first generation.
//   - **No stranded member.** Every blocked JoinGroup or SyncGroup is
//     answered exactly once per rebalance outcome — with the result,
//     with REBALANCE_IN_PROGRESS when a new rebalance overtakes a sync,
//     with UNKNOWN_MEMBER_ID when the member is removed, or with
//     FENCED_INSTANCE_ID when a static member is replaced. A handler
//     also stops waiting when its connection dies.
//   - **Session timeout.** A member not heard from (JoinGroup,
//     SyncGroup, Heartbeat, OffsetCommit) for its session timeout is
//     removed, unless it is blocked in JoinGroup or SyncGroup; a new
//     member blocked in its first JoinGroup is removed after
//     NewMemberJoinTimeout (KIP-394).
//   - **Pending-sync timeout.** After a rebalance, members that do not
//     SyncGroup within the rebalance timeout are removed and the group
//     rebalances again (Kafka's pending-sync timeout), so a silent
//     leader cannot wedge the group.
//   - **Durable commits under the group lock.** Offset commits are
//     durable before they are acknowledged (O1) and are stored under
//     the group's lock, so retention and DeleteGroups never interleave
//     with a commit of the same group.
//   - **Persisted empty groups.** Groups that are Empty are persisted
//     as such (offsets.Group), so retention (KIP-211) and, after a
//     restart, ListGroups and DescribeGroups see them. As in Kafka, the
//     start of a rebalance is not written: an Empty group that members
//     join stays Empty in the store until its generation completes
//     (written then), and a restart meanwhile finds it Empty. Retention
//     goes by the group's state in memory, as Kafka's does: it passes
//     over a group stored Empty that is rebalancing.
//   - **Durable classic membership.** A group's membership (generation,
//     protocol type and name, leader, members with their protocols,
//     timeouts and static instance ids, and assignments) is durable
//     (the durable classic membership) before any client can observe
//     it: a completed rebalance's SyncGroup answers, and the new member
//     id of a static member replaced without a rebalance, are sent only
//     after the synced write. If the write fails (or the membership
//     exceeds MaxGroupStateBytes, Kafka's bound on a group record) the
//     waiting syncs get the error and the group rebalances; a static
//     replacement is undone. As in Kafka, a rebalance in progress is
//     not persisted: a restart resumes the last completed generation.
//     As in Kafka, the group stays CompletingRebalance while the
//     leader's assignment is written, and the write runs without the
//     group lock (assign_store.go): a member joining meanwhile starts
//     the next rebalance at once and the waiting syncs get
//     REBALANCE_IN_PROGRESS; the overtaken write's record, a generation
//     no member was told about, is replaced by the next one's.
//   - **Classic membership restored at restart.** After a restart, a
//     group persisted with members is Stable at its persisted
//     generation with its members, leader and assignments, so members
//     that heartbeat with their member id and generation go on without
//     a rebalance. Every member's session timer starts at the load
//     (Kafka's behaviour on loading a group): the time the server was
//     down does not count, and a member that died meanwhile is removed
//     one session timeout later (the session timeout).
//   - **Group size bound.** A group holds at most MaxGroupSize
//     (group.max.size) members and member ids handed out with
//     MEMBER_ID_REQUIRED; a JoinGroup that would add one more gets
//     GROUP_MAX_SIZE_REACHED. A static member replacing itself does not
//     add one.
//
// Consumer groups (KIP-848: ConsumerGroupHeartbeat, ConsumerGroupDescribe)
// share the coordinator, its map and the group lock:
//
//   - **One group type per id.** A group id names one group of one type
//     (classic or consumer; ListGroups v5 reports it). An empty classic
//     group becomes a consumer group on a ConsumerGroupHeartbeat join
//     and a consumer group without members becomes an empty classic
//     group on a JoinGroup, durably (the other type's record goes in
//     the same write). With members, the online migration
//     (migrate.go, group.consumer.migration.policy) converts a classic
//     group of protocol type "consumer" on a ConsumerGroupHeartbeat
//     join, serves classic members of a consumer group through
//     JoinGroup, SyncGroup, Heartbeat and LeaveGroup, and converts back
//     when the last consumer-protocol member goes; where the policy
//     forbids it, a heartbeat to a classic group is GROUP_ID_NOT_FOUND
//     and a JoinGroup to a consumer group without classic support
//     INCONSISTENT_GROUP_PROTOCOL; DescribeGroups (v0–5) describes a
//     consumer group as Dead, ConsumerGroupDescribe a classic group as
//     GROUP_ID_NOT_FOUND, as Kafka does.
//   - **Group epoch and target assignment.** A subscription change, a
//     member joining or leaving (or expiring) and a change of the
//     subscribed topics advance the group epoch, and the target
//     assignment is recomputed at once by the preferred assignor
//     (uniform or range): every subscribed partition goes to exactly
//     one subscribed member. New members joining in one batch of
//     heartbeats share one computation, at the epoch of the last of
//     them, made before any of them is reconciled and before anything
//     else of the batch is applied (consumer_joins.go).
//   - **Revocation before reassignment.** No partition has two owners.
//     A member moves to the target epoch only when it has nothing left
//     to revoke; a partition to revoke stays its member's until a
//     heartbeat reports it no longer owns it (or the member goes), and
//     a partition is given only when no other member holds it. A member
//     that does not revoke within its rebalance timeout is removed. A
//     member is asked to revoke only partitions it was told it has
//     (revocation of told partitions only): partitions a held answer
//     (releases soon to come) gave it, and the target took back before
//     that answer was sent, are released at once, as no heartbeat of
//     its would ever report them gone. A heartbeat with another epoch
//     than the member's is FENCED_MEMBER_EPOCH, except the previous
//     epoch with owned partitions the member still holds (a lost
//     answer).
//   - **Server-side regex subscriptions.** Subscriptions are resolved
//     on the server: topic names and one RE2 regex per member, matched
//     against whole names of the topics the TopicLister gives, internal
//     ones included: Kafka's broker does not skip internal topics
//     either, so a regex like ".*" is assigned __consumer_offsets
//     (kafka/ lists it with one empty partition). At most once a
//     second, on a heartbeat, the resolution is redone and a change
//     advances the epoch (the group epoch and target assignment), so
//     created and deleted topics are picked up. With authorization on
//     (Config.MayDescribe) a member is subscribed only to the topics
//     its own principal may DESCRIBE, regex matches and names alike,
//     whoever's heartbeat resolves the group (Kafka drops undescribable
//     regex matches; names without DESCRIBE are refused before, in
//     kafka/); a changed ACL is picked up at the next resolution. The
//     work is bounded: at most 10000 names per member
//     (INVALID_REQUEST), regexes of at most 1024 bytes and at most 64
//     distinct regexes per group (INVALID_REGULAR_EXPRESSION past
//     these), one pass over the topics per distinct regex.
//   - **Durable consumer group state.** A consumer group's state
//     (epochs, members with their subscriptions, assigned and revoking
//     partitions, the target and the subscribed topics' metadata) is
//     durable (the durable consumer group state) before a heartbeat is
//     answered with anything that depends on it. If the write fails, or
//     the state exceeds MaxGroupStateBytes (UNKNOWN_SERVER_ERROR), the
//     heartbeat gets the error and the group goes back to its last
//     durable state.
//   - **Releases soon to come.** A member's heartbeat (not a join or
//     leave) that finds partitions of its target held by a member told
//     to revoke them, by one whose heartbeat is due within the wait, or
//     by one sent a changed assignment less than the wait ago that has
//     not acknowledged it yet (clients acknowledge at once, and are told
//     of a revocation then), waits before it is applied until they are released (each written
//     batch of heartbeats wakes it) or a fifth of the heartbeat interval
//     (at most 100 ms) has passed; it then gets what was released in the
//     same answer, not one heartbeat interval later. A heartbeat that
//     leaves its member in that state (its own release applied) has its
//     answer held the same way and its member reconciled again before it
//     is answered. The wait comes before the heartbeat changes anything,
//     or after its changes are written, and every answer follows the
//     write of the state it shows (consumer_await.go).
//   - **Consumer groups restored at restart.** After a restart a
//     consumer group has its members at their epochs with their
//     partitions and target: members heartbeating with their epoch go
//     on without a reassignment. Sessions start at the load (as classic
//     membership restored at restart); a static member that left with
//     epoch -2 keeps its partitions for its session timeout, and its
//     instance id rejoining takes them over with no epoch change
//     (UNRELEASED_INSTANCE_ID while the old member is still there).
//   - **Commits at the member epoch.** Offset commits to a consumer
//     group with members must come from a member (UNKNOWN_MEMBER_ID)
//     with OffsetCommit v9+ (UNSUPPORTED_VERSION; TxnOffsetCommit is
//     exempt) at its current member epoch (STALE_MEMBER_EPOCH);
//     OffsetFetch v9 naming a member is checked the same way
//     (TxnOffsetCommit answers ILLEGAL_GENERATION for a stale epoch,
//     and OffsetCommit v9+ GROUP_ID_NOT_FOUND for a member's commit to
//     a group that does not exist, as Kafka). An empty consumer group
//     takes commits with epoch -1.
//
// Lock order: Coordinator.mu and group.mu are never held together; a group
// removed from the map is first marked dead under its own lock, and lookups
// skip dead groups.
package group
