// Package txnmark carries the transaction coordinator's work on
// partitions to the nodes that lead them, through etcd, in cluster mode.
//
// The coordinator (kafka/txn, on the node holding the coordinator role)
// registers a partition in a transaction (AddTxnPartition) and, once the
// transaction is decided, writes its marker there (WriteTxnMarker). On a
// single node both are calls into the local resolver. In a cluster the
// partition is led by any node, and may change leader at any moment, so
// both become records in etcd that the partition's current leader
// applies:
//
//	P txn/<topic>/<partition>/<producer id>   {"epoch":E}                  registered
//	                                          {"epoch":E,"decision":"commit"|"abort"}  a marker to write
//
// One key per partition and producer, overwritten as the transaction
// moves on and deleted once its marker is durable: etcd holds only the
// open transactions' partitions (the coordinator bounds those, the transaction bounds).
//
// At transaction version 2 the leader asks the coordinator to add a
// partition (KIP-890 implicit adds), through a record of its own that
// the coordinator answers in place (adds.go):
//
//	P txnadd/<asker>/<seq>   {"id":..,"pid":..,"epoch":..,"topic":..,"partition":..}   asked, under the asker's lease
//	                         {...,"answered":true,"code":C}                             answered
//
// Requests live as long as one produce waits: the asker deletes its
// request once answered or given up, and its lease ends any it left.
//
// # Rules
//
//   - **Coordinator-fenced records.** A coordinator writes a record
//     only in an etcd transaction guarded by its coordinator ownership
//     (the fenced transaction): a coordinator that lost the role
//     registers and decides nothing. WriteTxnMarkers returns nil for a
//     partition only once its record is gone (leader-applied records)
//     or its direct marker durable, so the
//     coordinator completes a transaction (durable partition adds) only
//     when every marker is durable.
//   - **One decision transaction.** WriteTxnMarkers writes all of a
//     transaction's decisions in one etcd transaction under the
//     coordinator ownership, split only when the transaction has more
//     partitions than etcd's --max-txn-ops lets one hold
//     (Options.MaxTxnOps).
//   - **Direct markers.** On a partition this node leads, that
//     transaction deletes the registration instead of writing a
//     decision, and the node writes the marker itself through its
//     resolver (published and fenced by the partition's ownership like
//     any batch), only once the guarded transaction committed, and
//     answers only once it is durable. The partition and producer's key
//     lock is held from before the transaction until the marker is
//     durable; appliers and Verify take it too, and an applier whose
//     record was deleted by a direct marker applies nothing (the
//     floor), so no registration of a later transaction is applied here
//     between the fence and the marker. A direct marker that fails gets
//     its decision record (leader-applied records). Recovery needs no
//     record: the decision is in the coordinator's store until every
//     marker is durable.
//   - **Leader-applied records.** A node applies the records of the
//     partitions it serves (cluster rebuild before serving): a
//     registration is handed to the resolver; a decision is written as
//     the marker (durable when the resolver returns: the group commit
//     is published, acknowledgement after PUT and commit), and then the
//     record is deleted in an etcd transaction guarded by both its mod
//     revision (a newer record is never lost) and the node's ownership
//     of the partition (a node that lost it, whose local copy may be
//     stale and so find nothing to mark, deletes nothing). A record
//     that fails is retried; a node that acquires a partition applies
//     its records before anything else (Acquired), so a decision
//     outlives any number of failovers.
//   - **Verification across nodes.** KIP-890 part 1 across nodes: a
//     transactional batch the leader's resolver refuses as not
//     registered (its registration record not applied yet, or applied
//     by a previous leader) is checked against etcd with a linearizable
//     read (Verify): registered at the batch's epoch and not yet
//     decided, the registration is applied and the batch appended;
//     otherwise INVALID_TXN_STATE as before.
//   - **Implicit adds across nodes.** KIP-890 part 2 across nodes: a
//     Produce v12+ batch that Verify refuses has its partition added by
//     the coordinator (AddImplicitly), whose relay answers with
//     kafka/txn's own implicit add under the transactional id's lock —
//     the add durable and its registration record written before the
//     answer NONE. The answer is written under the coordinator
//     ownership and only over the request as asked (its mod revision):
//     a coordinator that lost the role answers nothing, its successor
//     (SetCoordinator) answers the request, and a coordinator not ready
//     to answer (its restored store not swapped in) leaves it for
//     later. The leader appends only once Verify then finds the
//     registration at the batch's epoch and undecided, so an
//     acknowledged batch is always in its transaction's decision, and
//     an add that comes after the decision is refused. Answers
//     run in at most 16 slots at once, but an answer whose add waits
//     for its transactional id's completion (kafka/txn, waiting for a
//     completion) gives its slot up for the wait, so one tenant's
//     waiting ids never stall the other ids' adds; at most
//     maxWaitingAdds wait, and past that an add that would wait is
//     answered CONCURRENT_TRANSACTIONS (retriable) instead.
package txnmark
