// Package apiversions answers ApiVersions (key 18), versions 0–5.
//
//	v0  the key list.
//	v1  throttle time.
//	v2  nothing new.
//	v3  flexible; the client sends its software name and version; the
//	    feature transaction.version is advertised, supported 0–2 and
//	    finalized at 2 (KIP-890 part 2, transaction version 2), so clients
//	    run their transactions at version 2. A supported range's
//	    minimum of 0 is reported as 1, as Kafka does before v4.
//	v4  nothing new on the wire; a supported range may start at 0
//	    (KAFKA-17011).
//	v5  the client may name the cluster and node it means to reach
//	    (KIP-1242): both or neither (a cluster id without a node id,
//	    or a node id without a cluster id, is INVALID_REQUEST); a
//	    cluster id that is not this cluster's, or a node id that is not
//	    this node's, is answered REBOOTSTRAP_REQUIRED with no keys, as
//	    Kafka answers, so a client whose metadata maps an address to the
//	    wrong broker rediscovers the cluster from its seeds.
//
// The feature share.version (KIP-932) is advertised too, supported 0–2
// and finalized at 2 as Kafka 4.4 (2 adds share-group dead-letter
// queues, KIP-1191, kafka/share; 0–1 in cluster mode, which serves
// none), and
// group.version (KIP-848), supported 0–1 and finalized at 1. As in Kafka
// 4.4 the share-group APIs (76–79, 90–92) and the consumer group APIs
// (68, 69) are listed at every level; at 0 they answer
// UNSUPPORTED_VERSION (kafka/featuregate). UpdateFeatures
// (kafka/, over kafka/features) changes the finalized levels, which persist
// in the data directory (kafka/features); the epoch counts the changes.
//
// The feature streams.version (KIP-1071) is advertised, supported 0–1 and
// finalized at 1, as Kafka 4.4 does: the streams group APIs (88, 89) are
// served (kafka/streams), and a Streams client uses group.protocol=streams
// only while the feature is finalized.
//
// In cluster mode (Config.Cluster, no share groups without States) share.version is not
// advertised (but where share groups have a durable home, share groups
// in cluster mode), nor the share-group APIs; transaction.version is,
// finalized at 2 (cluster transactions); streams groups are served by
// the group coordinator node, as consumer groups (coordinator routing).
//
// A request at a version above 5 is answered in the v0 format with
// UNSUPPORTED_VERSION and the ApiVersions key alone (KIP-511): the client
// then retries at our maximum. The response header is always v0 (kafka/conn.go, appendResponse).
// From v3 the client's software name and version must match
// [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (KIP-511); otherwise the
// answer is INVALID_REQUEST with no keys, as Kafka's.
// Left out: every other feature (metadata.version, kraft.version, ...).
// A feature finalized at 0 is not listed, as in Kafka.
//
// What it may not touch: the connection (kafka/ records the client's
// software), which keys are served (kafka/'s dispatch table, handed in as
// a list) and where the feature levels are kept (kafka/features).
package apiversions
