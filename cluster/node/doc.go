// Package node runs one kgateway node of a cluster (cluster mode): its
// registration, which partitions and which coordinator role it owns, the
// replication of its group commits, and the front end's view of the
// cluster (kafka.Cluster).
//
// A node keeps a local copy of each partition it owns, on the existing
// storage, ledger and resolver; the copy is a cache. The truth is the
// object store and etcd (cluster/diskless): a group commit is
// acknowledged only once its object is written and its ranges are
// published under the owners' fencing epochs.
//
// # Keyspace
//
// Under the cluster prefix P (cluster.etcd.prefix):
//
//	P nodes/<node id>   a live node: JSON host, port, rack; under the
//	                    node's session lease
//	P owner/<pkey>      cluster/owner; pkey is "<topic id>-<partition>"
//	                    (topic id as 32 hex digits) or "coordinator"
//	P cluster-id        the cluster id every node reports (SharedClusterID)
//
// # Rules
//
//   - **One registration per node id.** A node id is registered by one
//     session at a time: registration creates its key under the node's
//     session lease. A key under another lease is a previous
//     incarnation's (a process killed before its lease expired, or the
//     node's own lost session): the new one revokes that lease, which
//     fences the old incarnation's ownerships, and registers at once.
//     Only a start takes an id over: a node that lost its session takes
//     back only its own previous registration, never a newer
//     incarnation's, so two processes never take an id from each other
//     in turn. A start whose registration fails returns the error and
//     leaves nothing running.
//   - **Rendezvous placement.** Placement is rendezvous hashing of the
//     pkey over the registered nodes: every node computes the same
//     preferred owner from the same membership. A node acquires a
//     partition it prefers when it has no owner, and releases one it
//     owns when another live node is preferred (handover). Ownership
//     itself is decided by etcd alone (one owner at a time), so nodes
//     that disagree for a moment never both own. Acquisitions (each
//     with its rebuild, rebuild before serving) run beside the rounds,
//     at most one per slot: a round starts them and goes on, so a slot
//     freed while another rebuilds is taken at once; a slot being
//     acquired is released only by a later round. A release that fails
//     (its outcome unknown) keeps the ownership, not served, until a
//     later round's release succeeds: an owner record left naming a
//     live node would keep every other node out.
//   - **Rebuild before serving.** A partition is served only after its
//     local copy was rebuilt from the published copy under the new
//     ownership (resolver ReplacePartition): the copy's end is the
//     published end, and its producer state is replayed from the
//     published batches, so a retry after a failover is still
//     deduplicated. Until then, from the moment a release begins, and
//     from the moment the node's session ends (by the etcd client's own
//     clock, even while etcd is unreachable), Leader reports no leader
//     on this node.
//   - **Replication under ownership.** Replicate hands a group commit
//     to the published copy with the ownership each entry's partition
//     is served under; an entry of a partition this node does not
//     serve, or whose publication failed, is never acknowledged
//     (storage.ErrNotLeader when fenced). A partition whose publication
//     failed any other way is released and rebuilt: its local copy may
//     hold an entry the published copy does not. BeginReplicate does the same
//     with up to CommitDepth group commits in flight (storage I14): the
//     next object is written while the last one publishes, and
//     publications keep their order (in-order publication).
//   - **Graceful handover.** A graceful shutdown deregisters first, so
//     that the other nodes prefer each other, then releases every
//     ownership; a node that dies loses them when its session lease
//     expires (cluster.session.timeout.ms).
//   - **Coordinator role.** The coordinator role is the pkey
//     "coordinator": its owner restores the group state from etcd and
//     serves groups; offsets writes are fenced by that ownership
//     (cluster/coord).
//   - **Data directory as a cache.** The data directory of a cluster
//     node is a cache: it is emptied at start. A directory holding
//     single-node data (no cluster marker) is refused rather than
//     emptied.
//   - **Bounded rebuild.** The rebuild (rebuild before serving) copies
//     into the local cache only the newest published ranges whose bytes
//     fit cluster.cache.rebuild.bytes (none when even the last does
//     not; -1: all of them), through resolver ReplacePartitionOver,
//     which replays the producer and transaction state from the
//     published start all the same (resolver the local copy as a
//     cache). Upkeep publishes the local start only when retention or
//     DeleteRecords moves it past where the rebuild began it, never the
//     cache's own start.
//   - **Pinned reads below the cache.** Offsets below the local cache
//     are read from the published ranges (ledger R20, R21): each range
//     is revalidated in a read-only etcd transaction and the read is
//     covered by the node's reader floor, one record under its session
//     lease that upkeep advances every 10 Ticks past the reads that
//     ended (floored reads; pins under the lease where the floor cannot
//     cover a read: pinned objects kept, pin revalidation), so the
//     coordinator's Collect never deletes an object being read, and a
//     node that dies leaves no floor or pin beyond
//     cluster.session.timeout.ms. The published start the
//     reads begin at is the one the rebuild read, moved only by this
//     node's own publications (the owner is its only writer). A merged
//     range, or a commit's range longer than a piece, is listed in its
//     pieces (merged ranges in pieces, commit ranges in pieces), so a
//     read fetches, checks and caches only the pieces it needs (about
//     1 MiB each), not the whole range; a record without pieces (one
//     written before them) is still read whole.
//   - **Range cache.** The bytes of published ranges read below the
//     local copies are kept in a node-wide cache bounded by
//     Config.RangeCacheBytes, least recently used out first, keyed by
//     object, byte range and SHA-256, and only once read and checked
//     (checked range reads). A hit reads no object, so it takes no pin;
//     the ranges themselves are still listed from etcd at every read
//     (R20), so a trimmed range is never served.
//   - **Periodic state export.** An owner exports each partition's
//     producer and transaction state (resolver ExportState: a
//     checkpoint as of the offset it covers) to the object store every
//     Config.StateInterval while the log grows (cluster/diskless
//     PutState, the published producer state: never past the published
//     end). A rebuild installs the last one and replays only from the
//     offset it covers (exported producer state), so a failover reads
//     the published log from there, not from its start; a state missing
//     or unreadable only lengthens the replay, which then starts at the
//     published start.
//   - **Transaction relay.** Transactions: the node's transaction relay
//     (Parts.Txn, cluster/txnmark) applies the registrations and
//     markers of exactly the partitions Serving reports, under the
//     ownership it reports; a partition that starts being served wakes
//     the relay, so decisions left by a previous leader are written
//     first thing. The coordinator role's restore sets the relay's
//     coordinator ownership before the restored coordinator completes
//     anything (coordinator-fenced records).
package node
