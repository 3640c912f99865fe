package routing

// What a node advertises (no share groups without States, share groups in cluster mode, KIP-714): the APIs a cluster node
// does not serve and the API families whose serving depends on the
// node's configuration. Every served API is served at every version in
// cluster mode too (cluster transactions: transaction version 2 included).

// shareAPIs are the share-group APIs (no share groups without States, share groups in cluster mode).
var shareAPIs = map[int16]bool{76: true, 77: true, 78: true, 79: true, 90: true, 91: true, 92: true}

// notInCluster are the APIs not served in cluster mode (no share groups without States): share
// groups, unless they have a durable home (share groups in cluster mode).
var notInCluster = map[int16]bool{
	76: true, 77: true, 78: true, 79: true, 90: true, 91: true, 92: true, // share groups
}

// telemetryAPIs are GetTelemetrySubscriptions and PushTelemetry.
var telemetryAPIs = map[int16]bool{71: true, 72: true}

// ShareAPI says whether key is a share-group API (no share groups without States, share groups in cluster mode).
func ShareAPI(key int16) bool { return shareAPIs[key] }

// NotInCluster says whether key is not served in cluster mode (no share groups without States),
// share groups aside when they have a durable home (share groups in cluster mode).
func NotInCluster(key int16) bool { return notInCluster[key] }

// TelemetryAPI says whether key is a client telemetry API (KIP-714),
// served only with a telemetry manager.
func TelemetryAPI(key int16) bool { return telemetryAPIs[key] }
