// Package streams is the Kafka Streams rebalance protocol (KIP-1071) as
// a pure state machine: a streams group's topology, members, epochs and
// task assignment, with no locks, timers or I/O. kafka/group keeps one
// Group per streams group under its group lock, persists Encode's bytes
// in the offsets store before it answers, and runs the session and
// revocation timers; kafka/ creates the internal topics a heartbeat
// returns.
//
// A heartbeat (Group.Heartbeat, after Validate) goes as Kafka's group
// coordinator goes:
//
//  1. the member is found or created (a join; a static member's instance
//     id takes over the member it left), its epoch checked;
//  2. the topology: the first join sets it, a higher topology epoch
//     replaces it, a member behind it gets STALE_TOPOLOGY;
//  3. the topology is configured against the topics that exist
//     (Configure): partition counts derived, missing source topics,
//     missing internal topics (which the caller creates) or wrongly
//     partitioned ones reported in the member's status; tasks are only
//     assigned once it is ready;
//  4. the group epoch advances when a member joins, leaves or changes
//     what the assignment depends on (process, rack, endpoint, tags),
//     when the topology or its topics' partition counts change, and when
//     a warm-up task is caught up; the target assignment is then
//     recomputed by the sticky assignor (Assign), unless the initial
//     rebalance delay of a new group still runs;
//  5. the member is reconciled toward its target.
//
// Invariants:
//
//   - Revoked before reassigned: an active task is given to a member only
//     when no other member owns it (as assigned or being revoked); a
//     standby or warm-up only when no other member of the same process
//     holds the task. A member with tasks to give up stays at its epoch
//     (UnrevokedTasks) until a heartbeat reports it no longer owns them.
//   - Epochs: a heartbeat carries the member's epoch, or the previous one
//     with only tasks it still owns (a lost answer); anything else is
//     FENCED_MEMBER_EPOCH.
//   - Balance and stickiness (Assign): every task active on one member,
//     members at most one task apart, tasks staying where they were
//     while that keeps the balance; standbys on other processes than
//     their active task; warm-ups while a new process restores.
//   - Encode is deterministic (sorted JSON), so equal states encode
//     equally and the coordinator writes only changes.
//   - Topology descriptions (KIP-1331): the group keeps the description
//     of its topology epoch a member pushed, asked for while missing,
//     bounded (description.go).
package streams
