// Package owner gives a partition one owner at a time in etcd, with a
// fencing epoch, so that a node that lost a partition (its session lease
// expired while it was paused or cut off, and another node took over)
// cannot complete a write made conditional on its ownership.
//
// A cluster node (cluster/node) owns partitions and the coordinator role
// through it.
//
// # Keyspace
//
// Under a prefix chosen by the caller (one per cluster):
//
//	<prefix>owner/<partition>  the owner: node name and epoch (JSON),
//	                           attached to the owner's session lease
//	<prefix>epoch/<partition>  the partition's fencing epoch (decimal),
//	                           durable, never deleted
//
// # Rules
//
//   - **One owner at a time.** Acquire creates the owner key in a
//     transaction that requires it to be absent, attached to the node's
//     session lease (concurrency.Session): of two nodes acquiring at
//     once, exactly one succeeds; the other gets ErrOwned.
//   - **Rising fencing epoch.** The epoch increases on every ownership
//     change: the transaction that creates the owner key also writes
//     epoch+1, and requires the epoch key unchanged since it was read
//     (its mod revision). So no two acquisitions of a partition ever
//     share an epoch, including two by the same node (a node that lost
//     its lease and acquired again has a new epoch, and its old
//     Ownership is stale).
//   - **Ownership ending with the lease.** Ownership ends with the
//     session lease (expiry after its TTL, or revocation) or with
//     Release, and only then: the owner key goes with the lease, by
//     etcd's clock, whether or not the process noticed. The epoch key
//     stays.
//   - **Fenced transaction.** A fenced transaction (Fenced) runs its
//     operations only if, for every Ownership given, the owner key is
//     the very key that acquisition created (its create revision) and
//     the epoch is still that acquisition's. A node whose lease ended,
//     or that was replaced by anyone, fails it as a whole and writes
//     nothing: ErrFenced, naming the lost partitions. The guard holds
//     two comparisons per partition; etcd's max-txn-ops (128 by
//     default) bounds comparisons and operations of one transaction, so
//     a caller splits larger sets.
//   - **No acknowledgement without a fenced commit.** A caller
//     acknowledges nothing whose fenced transaction failed or whose
//     outcome is unknown (an error other than ErrFenced, e.g. a
//     timeout: it must re-read before deciding), and treats an
//     ErrFenced partition as lost (Kafka's NOT_LEADER_OR_FOLLOWER),
//     never retrying under the same Ownership.
package owner
