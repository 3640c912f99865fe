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
// and Dead once deleted or expired. Invariants, cited as G1… in code:
//
//   - G1 Errors are the ones Kafka's GroupCoordinator returns, in the same
//     order of checks (Dead -> COORDINATOR_NOT_AVAILABLE, fenced static
//     member -> FENCED_INSTANCE_ID, unknown member -> UNKNOWN_MEMBER_ID,
//     wrong generation -> ILLEGAL_GENERATION, then the state's answer).
//   - G2 A rebalance completes when every known member has rejoined and no
//     member id handed out with MEMBER_ID_REQUIRED is still outstanding, or
//     when the rebalance timeout (the largest of the members') fires; members
//     that did not rejoin by then are removed.
//   - G3 No member is stranded: every blocked JoinGroup or SyncGroup is
//     answered exactly once per rebalance outcome — with the result, with
//     REBALANCE_IN_PROGRESS when a new rebalance overtakes a sync, with
//     UNKNOWN_MEMBER_ID when the member is removed, or with
//     FENCED_INSTANCE_ID when a static member is replaced. A handler also
//     stops waiting when its connection dies.
//   - G4 A member not heard from (JoinGroup, SyncGroup, Heartbeat,
//     OffsetCommit) for its session timeout is removed, unless it is blocked
//     in JoinGroup or SyncGroup; a new member blocked in its first JoinGroup
//     is removed after NewMemberJoinTimeout (KIP-394).
//   - G5 After a rebalance, members that do not SyncGroup within the
//     rebalance timeout are removed and the group rebalances again (Kafka's
//     pending-sync timeout), so a silent leader cannot wedge the group.
//   - G6 Offset commits are durable before they are acknowledged (O1) and
//     are stored under the group's lock, so retention and DeleteGroups never
//     interleave with a commit of the same group.
//   - G7 Groups that are Empty are persisted as such (offsets.Group), so
//     retention (KIP-211) and, after a restart, ListGroups and
//     DescribeGroups see them.
//   - G8 A group's membership (generation, protocol type and name, leader,
//     members with their protocols, timeouts and static instance ids, and
//     assignments) is durable (offsets O20) before any client can observe
//     it: a completed rebalance's SyncGroup answers, and the new member id
//     of a static member replaced without a rebalance, are sent only after
//     the synced write. If the write fails (or the membership exceeds
//     MaxGroupStateBytes, Kafka's bound on a group record) the waiting
//     syncs get the error and the group rebalances; a static replacement
//     is undone. As in Kafka, a rebalance in progress is not persisted: a
//     restart resumes the last completed generation.
//   - G9 After a restart, a group persisted with members is Stable at its
//     persisted generation with its members, leader and assignments, so
//     members that heartbeat with their member id and generation go on
//     without a rebalance. Every member's session timer starts at the load
//     (Kafka's behaviour on loading a group): the time the server was down
//     does not count, and a member that died meanwhile is removed one
//     session timeout later (G4).
//   - G10 A group holds at most MaxGroupSize (group.max.size) members and
//     member ids handed out with MEMBER_ID_REQUIRED; a JoinGroup that would
//     add one more gets GROUP_MAX_SIZE_REACHED. A static member replacing
//     itself does not add one.
//
// Lock order: Coordinator.mu and group.mu are never held together; a group
// removed from the map is first marked dead under its own lock, and lookups
// skip dead groups.
package group
