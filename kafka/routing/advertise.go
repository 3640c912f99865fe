package routing

// What a node advertises (no share groups without States, share groups in cluster mode, cluster transactions at version 1, KIP-714): the APIs a cluster node
// does not serve, the versions it caps, and the API families whose
// serving depends on the node's configuration.

// shareAPIs are the share-group APIs (no share groups without States, share groups in cluster mode).
var shareAPIs = map[int16]bool{76: true, 77: true, 78: true, 79: true, 90: true, 91: true, 92: true}

// notInCluster are the APIs not served in cluster mode (no share groups without States): share
// groups, unless they have a durable home (share groups in cluster mode).
var notInCluster = map[int16]bool{
	76: true, 77: true, 78: true, 79: true, 90: true, 91: true, 92: true, // share groups
}

// clusterMaxVersion caps APIs in cluster mode (cluster transactions at version 1): transactions are
// served at transaction version 1, so neither Produce v12 nor EndTxn and
// TxnOffsetCommit v5, which would add partitions and groups to a
// transaction implicitly (KIP-890 implicit adds) from whichever node leads them, are
// advertised or served.
var clusterMaxVersion = map[int16]int16{0: 11, 26: 4, 28: 4}

// telemetryAPIs are GetTelemetrySubscriptions and PushTelemetry.
var telemetryAPIs = map[int16]bool{71: true, 72: true}

// ShareAPI says whether key is a share-group API (no share groups without States, share groups in cluster mode).
func ShareAPI(key int16) bool { return shareAPIs[key] }

// NotInCluster says whether key is not served in cluster mode (no share groups without States),
// share groups aside when they have a durable home (share groups in cluster mode).
func NotInCluster(key int16) bool { return notInCluster[key] }

// ClusterMaxVersion is key's highest version in cluster mode, capped is
// false when it is not capped (cluster transactions at version 1).
func ClusterMaxVersion(key int16) (max int16, capped bool) {
	max, capped = clusterMaxVersion[key]
	return max, capped
}

// TelemetryAPI says whether key is a client telemetry API (KIP-714),
// served only with a telemetry manager.
func TelemetryAPI(key int16) bool { return telemetryAPIs[key] }
