// Package routing holds the cluster-mode answers that do not depend on
// the cluster's state (cluster routing, share groups in cluster mode, cluster transactions; kafka/doc.go "Cluster mode:
// routing"): what a node that does not coordinate groups and
// transactional ids answers their requests (NotCoordinator), and which
// APIs a node advertises and serves in cluster mode
// (NotInCluster, ShareAPI, TelemetryAPI), and
// FindCoordinator's answers once kafka/ knows the coordinator
// (FindCoordinator, NoCoordinator, FindShareCoordinator).
//
// What it may not touch: the cluster's memory, the server, the resolver
// or any coordinator. kafka/ asks its Cluster who leads and who
// coordinates (routing.go), and calls here for the answer once it knows
// this node does not; the error answers it shares with the authorization
// rules come from kafka/authz.
package routing
