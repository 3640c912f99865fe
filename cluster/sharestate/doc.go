// Package sharestate keeps share groups' share-partition states (KIP-932;
// share groups in cluster mode) in etcd in cluster mode, where the leader of each
// partition serves ShareFetch and ShareAcknowledge for it and the next
// leader must find the state the last one left.
//
// Why etcd directly, not the coordinator's mirrored store: a leader
// writes on every acquisition and acknowledgement; through the
// coordinator that would be a request to another node and a write
// fenced by the wrong ownership (the coordinator's, not the
// partition's). Here each write is one etcd transaction guarded by the
// partition's own ownership, so a fenced leader cannot overwrite its
// successor's state, and a new leader reads the state with one Get.
// Kafka's share coordinator (ReadShareGroupState, WriteShareGroupState)
// plays this part there.
//
// # Keyspace
//
// Under the cluster prefix P:
//
//	P share/<hex of group id>/<pkey>   one share-partition state: the
//	                                   offsets encoding of the SPSO and
//	                                   the runs in flight (acquisitions persisted as available)
//
// One key per group and partition, overwritten in place: its size is
// bounded by the in-flight window (the in-flight window bound), as runs.
//
// # Rules
//
//   - **Fenced share-state writes.** A leader's write of a state (Put)
//     commits only if the node still serves the partition under the
//     ownership whose epoch the state was read at (the fenced
//     transaction: the owner key is that acquisition's and the epoch
//     unchanged) and the key's mod revision is still the one the leader
//     last read or wrote. A fenced leader, or one whose state was reset
//     by the offsets admin meanwhile, writes nothing and must read the
//     state again (no acknowledgement without a fenced commit); a write
//     whose outcome is unknown is treated the same way.
//   - **Share-state admin reset.** The offsets admin's writes (Reset,
//     DeleteGroup) are guarded by the coordinator role's ownership
//     instead, and change the mod revision every leader's next Put
//     compares: a leader holding an older state is refused and reads
//     the admin's. States go with their group (DeleteGroup) and with
//     their topic (DeletePartitions, after the topic's deletion: its id
//     is never reused), so etcd holds states only of live groups and
//     partitions.
package sharestate
