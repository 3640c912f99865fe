// Package kafka is kgateway's Kafka wire front end: the listener, one reader
// and one writer goroutine per connection, and one file per API key
// (00_produce.go, 01_fetch.go, …). One table in apis.go drives both
// dispatch and ApiVersions, so only what is implemented is advertised.
//
// # Connections
//
// Invariants, cited by their names in code and tests:
//
//   - **Responses in request order.** Responses leave a connection in
//     request order.
//   - **Frame size limit.** A frame larger than
//     socket.request.max.bytes closes the connection before its body is
//     allocated; a malformed frame closes it too.
//   - **Go error closes the connection.** A handler's Go error closes
//     the connection. Everything a client should see is a Kafka error
//     code, per partition where the protocol has one; errors.go maps
//     internal errors to codes in one place.
//   - **Requests in effect one at a time.** Requests of one connection
//     take effect in request order, one at a time, as in Kafka: a
//     request's handler starts when the previous request has taken
//     effect. A Produce has taken effect once its batches are written,
//     before they are durable, so pipelined produce requests append in
//     order and share group commits; any other request when its handler
//     ends.
//   - **No response for acks=0.** Produce with acks=0 gets no response
//     at all.
//   - **Request memory budget.** Memory is bounded by
//     queued.max.request.bytes, one server-wide byte budget: a frame's
//     buffer is charged as its bytes arrive (a client holds what it has
//     sent, never what it declared), and the charge is returned when
//     the handler is done with the bytes (when the request has taken
//     effect). A frame is read only when the connection's previous
//     request has taken effect (behind a Produce: once it has started),
//     so requests pipelined behind a long wait stay unread in the
//     socket. While the budget is spent readers stop reading, so TCP
//     pushes back on clients; the process does not grow. When every
//     charged byte belongs to frames waiting for more, the one nearest
//     completion may exceed the budget, so that frames never deadlock
//     each other.
//   - **Idle connection timeout.** A connection with nothing in flight
//     that neither sends nor reads a byte for connections.max.idle.ms
//     is closed, and so is one whose frame body is not complete that
//     long after it started (a client that stopped, or trickles,
//     mid-frame).
//   - **Connection limit.** At most max.connections connections are
//     open; a connection beyond that is closed as soon as it is
//     accepted. Running out of file descriptors pauses accepting (with
//     backoff); it never stops serving.
//   - **Decoded-request bound.** A decoded request is bounded: every
//     byte of it other than record data is charged decodeFactor (64)
//     times to queued.max.request.bytes until its handler is done (the
//     request memory budget), and a request whose charge exceeds the
//     whole budget closes the connection (as the frame size limit).
//     Metadata answers a topic named twice once (decoded.go).
//
// # Listeners and security
//
// A Server serves any number of listeners (listener.go), each with a
// security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. A
// connection keeps the listener it came in on, which decides what it
// advertises, whether it runs a TLS handshake first and whether requests
// wait for a SASL login (sasl.go, 17_sasl_handshake.go,
// 36_sasl_authenticate.go). The security rules are in auth/doc.go
// ("Security"); the reader admits each request against the connection's
// state before decoding it, so the connection rules hold before
// authentication too. Authorization (auth/doc.go "Authorization") runs
// per request between decoding and the handler: authz.go, with one rule per API key
// in kafka/authz.
//
// # Fetch sessions
//
// Fetch sessions (KIP-227, kafka/fetchsession) keep a consumer's partition
// list between requests, so an incremental fetch names only what changed.
// Reads stay cursorless (R1): a session remembers what the client asked for
// and what it was last told, never a read position of the log.
//
//   - **Session epoch check.** An incremental fetch (epoch > 0) naming
//     an unknown session gets FETCH_SESSION_ID_NOT_FOUND; one whose
//     epoch is not the session's next epoch gets
//     INVALID_FETCH_SESSION_EPOCH, and the session is left as it was.
//     Both are top-level errors with no partitions; the client answers
//     with a full fetch.
//   - **Session open and close by epoch.** Epoch 0 closes the named
//     session (if any) and opens a new one from a full fetch; epoch -1
//     closes the named session and fetches without one (session id 0 in
//     the response).
//   - **One-by-one session epochs.** Epochs advance one by one: a
//     request checks and applies its epoch under the session's lock,
//     and takes it again to make its response. The lock is not held
//     while the request reads or long-polls, so a client cannot park
//     other work on it. A request whose session moved to another epoch
//     meanwhile (a duplicate request) is answered
//     INVALID_FETCH_SESSION_EPOCH, as Kafka does, and changes nothing.
//   - **Fetch session cache bound.** The cache holds at most
//     max.incremental.fetch.session.cache.slots sessions. When full, a
//     new session takes the place of the least recently used one if
//     that was idle for sessionEvictionAge, else of the smallest one if
//     the new one has more partitions; otherwise no session is created
//     and the client fetches sessionless (id 0). With an authorizer a
//     session belongs to the principal that opened it: one principal
//     holds at most
//     max.incremental.fetch.session.cache.slots.per.principal (beyond,
//     its new session takes the place of its own stale or smaller one,
//     or gets none); when the cache is full a principal holding at
//     least two fewer than the principal holding the most takes the
//     place of that one's least recently used session, and the
//     smaller-session rule applies only among the newcomer's own
//     principal's sessions.
//   - **Sessions keyed by ids or names.** A session keyed by topic ids
//     (v13+) is not used by a request keyed by names, nor the other way
//     round: FETCH_SESSION_TOPIC_ID_ERROR.
//   - **Session partition bound.** A session holds at most
//     maxSessionPartitions partitions, and all sessions together at
//     most maxCachedPartitions, so session memory is bounded whatever
//     clients send. A full fetch beyond either bound gets no session
//     (id 0, as when the cache is full); an incremental fetch that
//     grows its session beyond either removes the session and gets
//     FETCH_SESSION_ID_NOT_FOUND, and the client falls back to a full
//     fetch.
//
// # Cluster mode: routing
//
// With Config.Cluster set, the server is one node of several (routing.go).
// Nothing below applies without it: a single node leads every partition
// at leader epoch 0 and coordinates every group, as it always has.
//
//   - **Leaders at their epochs.** Metadata and DescribeCluster list
//     Cluster.Brokers(). A partition's leader, its only replica and
//     ISR, is its owner (Cluster.Leader), and its leader epoch the
//     ownership's fencing epoch; while it has no owner it is
//     LEADER_NOT_AVAILABLE with leader -1 and no replicas. The internal
//     topics' empty partitions are led by the group coordinator at
//     epoch 0. The controller id is the lowest live node id: nodes have
//     no controller (etcd decides), every node computes the same one,
//     and any node serves what clients send a controller.
//   - **NOT_LEADER_OR_FOLLOWER routing.** Produce, Fetch, ListOffsets,
//     DeleteRecords, OffsetForLeaderEpoch and DescribeProducers answer
//     NOT_LEADER_OR_FOLLOWER for a partition another node leads, or
//     none does (Kafka's answer for produce and fetch during an
//     election), after the topic and partition are known to exist.
//     Produce v10+ and Fetch v12+ then name the current leader and
//     epoch (KIP-951), and Produce lists its endpoint, so clients move
//     without a Metadata round trip.
//   - **Leader epoch check.** A client's current leader epoch (Fetch
//     v9+, ListOffsets v4+, OffsetForLeaderEpoch v2+; -1: none) older
//     than the partition's is FENCED_LEADER_EPOCH, newer
//     UNKNOWN_LEADER_EPOCH, checked before leadership as Kafka's
//     Partition does.
//   - **Coordinator routing.** FindCoordinator for groups answers
//     Cluster.Coordinator()'s node, COORDINATOR_NOT_AVAILABLE while
//     there is none or its address is not known. Every group API
//     (classic, consumer and streams groups: their state is the
//     coordinator's offsets store, mirrored, so it moves with the role)
//     on another node answers NOT_COORDINATOR wherever its response
//     carries an error (per partition, per group or once), after
//     authorization; ListGroups answers an empty list instead, as in
//     Kafka each broker lists the groups it coordinates and admin
//     clients merge every broker's.
//   - **No share groups without States.** Share groups are not served
//     without Config.Share.States (share groups in cluster mode).
//     ApiVersions then lists none of the share-group APIs (76–79,
//     90–92) nor the share.version feature, a request for one closes
//     the connection as for any API not advertised, and the share
//     coordinator is not started.
//   - **Topic changes through the catalog.** Every topic change goes
//     through Cluster.Catalog(): CreateTopics, DeleteTopics,
//     CreatePartitions, AlterConfigs and IncrementalAlterConfigs on
//     topics, and auto-creation by Metadata and Produce. The catalog
//     returns once this node's resolver has applied the change, so the
//     request's answer sees it.
//   - **Routing per request.** Routing is decided per partition per
//     request from Cluster's memory, which never blocks; the front end
//     caches none of it, so a change of owner or coordinator shows on
//     the next request.
//   - **Share groups in cluster mode.** Share groups are served in
//     cluster mode when Config.Share.States gives their share-partition
//     states a home every node reaches (share states outside the
//     offsets store; the server wires cluster/sharestate): then the
//     share-group APIs and share.version are advertised. The group
//     coordinator serves ShareGroupHeartbeat, ShareGroupDescribe and
//     Describe/Alter/DeleteShareGroupOffsets over its mirrored store,
//     and they are group APIs (coordinator routing): NOT_COORDINATOR on
//     any other node.
//   - **Share reads at the leaders.** ShareFetch and ShareAcknowledge
//     are served on every node by its leader side (share.NewLeader,
//     built once, never swapped) for the partitions the node leads, as
//     Kafka's clients send them to each partition's leader; a partition
//     led elsewhere, or by none, is NOT_LEADER_OR_FOLLOWER with the
//     current leader and its endpoint (KIP-951), so the share consumer
//     moves at once.
//   - **Group configs at the coordinator.** A group's configs (the
//     GROUP config resource) are kept by the coordinator:
//     IncrementalAlterConfigs for one on another node answers
//     NOT_COORDINATOR; leaders read them from the coordinator's mirror
//     (at most a second old).
//   - **Cluster transactions.** Transactions are served by the group
//     coordinator's node, at transaction version 2 as on one node
//     (every version of Produce, EndTxn and TxnOffsetCommit;
//     transaction.version finalized at 2 and fixed, as levels are kept
//     per node): FindCoordinator for a transactional id answers it
//     (coordinator routing), and on any other node InitProducerId with
//     a transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
//     TxnOffsetCommit and DescribeTransactions answer NOT_COORDINATOR,
//     ListTransactions an empty list. The coordinator registers
//     partitions and writes markers through etcd (coordinator-fenced
//     records, leader-applied records and verification across nodes),
//     and a transactional batch a leader refuses as not registered is
//     checked there before the refusal stands (Cluster.VerifyTxn,
//     verification across nodes); at Produce v12+ the leader then has
//     the coordinator add the partition (Cluster.AddTxnPartition,
//     implicit adds across nodes).
package kafka
