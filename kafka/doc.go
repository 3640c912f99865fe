// Package kafka is kgateway's Kafka wire front end: the listeners, the
// connections (their frames in kafka/connection), and one file per API key
// (00_produce.go, 01_fetch.go, …). One table in apis.go drives both
// dispatch and ApiVersions, so only what is implemented is advertised.
//
// # Connections
//
// kafka/connection reads, orders and answers each connection's frames;
// its doc.go names the connection rules (responses in request order, the
// frame size limit, a Go error closes the connection, requests in effect
// one at a time, no response for acks=0, the request memory budget, the
// idle connection timeout, the decoded-request bound, the connection
// limit). kafka/ parses each frame into a request (conn.go) and runs its
// handler.
//
// # Listeners and security
//
// A Server serves any number of listeners (kafka/config/listener.go),
// each with a security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or
// SASL_SSL. A
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
// Fetch sessions (KIP-227) keep a consumer's partition list between
// requests; kafka/fetchsession/doc.go "Rules" names their rules.
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
