package kafka

// The server's configuration vocabulary is kafka/config's (the Config
// fields, their defaults and validation, listeners, and the interfaces a
// Config hands in); kafka/ re-exports it under its own names, which the
// layers above use.

import "github.com/kgateway/kgateway/kafka/config"

type (
	// Config configures a Server (config.Config).
	Config = config.Config
	// SASLConfig is the SASL part of Config (config.SASLConfig).
	SASLConfig = config.SASLConfig
	// Listener is one listener's configuration (config.Listener).
	Listener = config.Listener
	// SecurityProtocol is a listener's security.protocol.
	SecurityProtocol = config.SecurityProtocol
	// Cluster is the view of the other nodes (config.Cluster).
	Cluster = config.Cluster
	// Broker is one node as Metadata describes it (config.Broker).
	Broker = config.Broker
	// Catalog is the set of topic changes the front end makes
	// (config.Catalog).
	Catalog = config.Catalog
	// Observer receives per-request events (config.Observer).
	Observer = config.Observer
)

// The protocols of listener.security.protocol.map.
const (
	Plaintext     = config.Plaintext
	SSL           = config.SSL
	SASLPlaintext = config.SASLPlaintext
	SASLSSL       = config.SASLSSL
)

// ParseSecurityProtocol checks a protocol name.
func ParseSecurityProtocol(s string) (SecurityProtocol, error) {
	return config.ParseSecurityProtocol(s)
}

// Defaults and bounds of Config (kafka/config).
const (
	DefaultMaxRequestBytes                    = config.DefaultMaxRequestBytes
	DefaultQueuedMaxRequestBytes              = config.DefaultQueuedMaxRequestBytes
	DefaultConnectionsMaxIdle                 = config.DefaultConnectionsMaxIdle
	DefaultMaxConnections                     = config.DefaultMaxConnections
	DefaultFetchSessionCacheSlots             = config.DefaultFetchSessionCacheSlots
	DefaultFetchSessionCacheSlotsPerPrincipal = config.DefaultFetchSessionCacheSlotsPerPrincipal
	DefaultFetchMaxBytes                      = config.DefaultFetchMaxBytes
	MinFetchMaxBytes                          = config.MinFetchMaxBytes
	DefaultMaxPartitions                      = config.DefaultMaxPartitions
	DefaultMaxPartitionsPerPrincipal          = config.DefaultMaxPartitionsPerPrincipal
	DefaultSlowRequest                        = config.DefaultSlowRequest
	DefaultFailedAuthDelay                    = config.DefaultFailedAuthDelay
	DefaultMaxUsers                           = config.DefaultMaxUsers
	DefaultSASLMaxReceiveSize                 = config.DefaultSASLMaxReceiveSize
	DefaultTLSHandshakeTimeout                = config.DefaultTLSHandshakeTimeout
)

// DefaultSASLMechanisms is sasl.enabled.mechanisms' default.
var DefaultSASLMechanisms = config.DefaultSASLMechanisms
