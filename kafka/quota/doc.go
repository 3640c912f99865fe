// Package quota is client quotas as Kafka has them (KIP-13, KIP-55,
// KIP-124, KIP-219, KIP-599, KIP-612): the quota configuration of user,
// client-id and ip entities (DescribeClientQuotas, AlterClientQuotas), its
// durable store, the resolution of the quota that applies to a client, the
// rate windows quotas are measured over and the throttle time a client
// that exceeds its quota is given.
//
// Everything here is pure over an explicit time (milliseconds since an
// arbitrary epoch): the kafka package feeds it the bytes and handler time
// of each request and mutes a throttled connection for the time returned.
//
// Rates (rate.go) follow Kafka's SampledStat/Rate: a sensor keeps
// Window.Samples samples of Window.Size each (quota.window.num=11,
// quota.window.size.seconds=1); a rate is the sum of the live samples over
// the time they span, never less than Samples-1 windows, so that a new
// client cannot burst past its quota in a short first window. A client
// over its quota Q at measured rate R is throttled for (R-Q)/Q × window:
// the time after which, sending nothing, its rate would be back at Q.
//
// controller_mutation_rate (KIP-599) is a token bucket of burst
// Q × Samples × Size: a strict request (CreateTopics v6+, CreatePartitions
// v3+, DeleteTopics v5+) is refused THROTTLING_QUOTA_EXCEEDED while the
// bucket is in debt, a permissive one is admitted; either is throttled for
// the time the debt takes to repay.
//
// Resolution (resolve.go) is Kafka's default quota callback, per quota
// key: user+client-id, user+default client-id, user, default user+client-id,
// default user+default client-id, default user, client-id, default
// client-id; the first entity with the key gives the quota, and the
// sensor it is measured on is that level's (a user-level quota is shared
// by every client of the user, a default one is each entity's own).
//
// At dispatch (requests.go, response.go): which requests are exempt,
// which count as mutations and from which version they are strict, the
// per-IP connection bound (max.connections.per.ip and its overrides), and
// a throttle's mark on a response (throttle_time_ms, whether the client
// throttles itself, a throttled Fetch's emptied answer). kafka/quotas.go
// keeps the connection, the principal, the observer and the logs.
package quota
