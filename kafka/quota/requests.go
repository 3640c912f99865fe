package quota

// Which requests the quotas apply to, by API key, and a connection's
// per-IP bounds: the rules kafka/'s dispatch asks before and after a
// handler runs. kafka/ keeps the connection, the principal and the
// observer; this file decides.

import (
	"fmt"
	"net"
)

// API keys these rules name (Kafka's numbers).
const (
	keySaslHandshake    = 17
	keyApiVersions      = 18
	keySaslAuthenticate = 36
	keyCreateTopics     = 19
	keyDeleteTopics     = 20
	keyCreatePartitions = 37
)

// exempt are the requests no request quota applies to: the ones a
// client needs before it can know it is throttled.
var exempt = map[int16]bool{keyApiVersions: true, keySaslHandshake: true, keySaslAuthenticate: true}

// Exempt reports whether no quota applies to requests of key.
func Exempt(key int16) bool { return exempt[key] }

// mutating are the requests controller_mutation_rate counts (KIP-599),
// and strictFrom the version from which each is strict: refused
// THROTTLING_QUOTA_EXCEEDED while the client is in debt, rather than
// admitted and throttled.
var (
	mutating   = map[int16]bool{keyCreateTopics: true, keyDeleteTopics: true, keyCreatePartitions: true}
	strictFrom = map[int16]int16{keyCreateTopics: 6, keyDeleteTopics: 5, keyCreatePartitions: 3}
)

// Mutating reports whether controller_mutation_rate counts requests of
// key (KIP-599).
func Mutating(key int16) bool { return mutating[key] }

// Strict reports whether a mutation of key at version is refused while
// the client's bucket is in debt (KIP-599), rather than admitted and
// throttled.
func Strict(key, version int16) bool { return version >= strictFrom[key] }

// ConnectionLimit is the bound max.connections.per.ip puts on ip: its
// override in limits, else def (0: none). refused says a new connection
// from ip, which has open ones already, is over it (an override of 0
// refuses every connection).
func ConnectionLimit(limits map[string]int, def int, ip string, open int) (limit int, refused bool) {
	limit, ok := limits[ip]
	if !ok {
		limit = def
	}
	return limit, limit > 0 && open >= limit || ok && limit == 0
}

// ResolveIPLimits maps max.connections.per.ip.overrides to addresses: an
// IP as it is, a host name to every address it resolves to now.
func ResolveIPLimits(overrides map[string]int) (map[string]int, error) {
	out := make(map[string]int, len(overrides))
	for host, n := range overrides {
		if ip := net.ParseIP(host); ip != nil {
			out[ip.String()] = n
			continue
		}
		addrs, err := net.LookupHost(host)
		if err != nil {
			return nil, fmt.Errorf("kafka: config: max.connections.per.ip.overrides: %s: %w", host, err)
		}
		for _, a := range addrs {
			out[a] = n
		}
	}
	return out, nil
}
