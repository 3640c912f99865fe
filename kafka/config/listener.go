package config

// Listeners (the per-listener advertised address): each has a name, a security protocol and what it
// advertises, as Kafka's listeners, advertised.listeners and
// listener.security.protocol.map describe them. A Server serves any
// number of them; every connection knows the one it came in on.

import (
	"crypto/tls"
	"fmt"
	"slices"

	"github.com/kgateway/kgateway/auth"
)

// SecurityProtocol is a listener's security.protocol.
type SecurityProtocol string

// The protocols of listener.security.protocol.map.
const (
	Plaintext     SecurityProtocol = "PLAINTEXT"
	SSL           SecurityProtocol = "SSL"
	SASLPlaintext SecurityProtocol = "SASL_PLAINTEXT"
	SASLSSL       SecurityProtocol = "SASL_SSL"
)

// ParseSecurityProtocol checks a protocol name.
func ParseSecurityProtocol(s string) (SecurityProtocol, error) {
	p := SecurityProtocol(s)
	switch p {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return p, nil
	}
	return "", fmt.Errorf("kafka: unknown security protocol %q (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)", s)
}

// UsesTLS and UsesSASL say what the protocol layers on the connection.
func (p SecurityProtocol) UsesTLS() bool  { return p == SSL || p == SASLSSL }
func (p SecurityProtocol) UsesSASL() bool { return p == SASLPlaintext || p == SASLSSL }

// Listener is one listener's configuration.
type Listener struct {
	// Name is the listener's name (PLAINTEXT, SASL_SSL, INTERNAL, ...).
	Name     string
	Protocol SecurityProtocol
	// Addr is the address to bind (server.Open binds it).
	Addr string
	// Advertised is this listener's advertised.listeners host:port; empty:
	// the address each client dialed (the per-listener advertised address).
	Advertised string
	// TLS serves SSL and SASL_SSL (required for them); auth.TLS.Config
	// makes one that follows certificate changes (TLS handshake timeouts and certificate reloads).
	TLS *tls.Config
	// Mechanisms is sasl.enabled.mechanisms for a SASL listener (empty:
	// Config.SASL.Mechanisms).
	Mechanisms []string
	// PrincipalMapper maps client certificate subjects (nil: DEFAULT).
	PrincipalMapper *auth.PrincipalMapper
}

// Validate checks one listener against the server's configuration.
func (l Listener) Validate(cfg Config) error {
	if _, err := ParseSecurityProtocol(string(l.Protocol)); err != nil {
		return fmt.Errorf("kafka: listener %s: %w", l.Name, err)
	}
	if l.Protocol.UsesTLS() && l.TLS == nil {
		return fmt.Errorf("kafka: listener %s: %s needs a TLS configuration (ssl.keystore.location)", l.Name, l.Protocol)
	}
	if l.Advertised != "" {
		if err := validateAdvertised(l.Advertised); err != nil {
			return fmt.Errorf("kafka: listener %s: %w", l.Name, err)
		}
	}
	if !l.Protocol.UsesSASL() {
		return nil
	}
	if cfg.SASL.Credentials == nil {
		return fmt.Errorf("kafka: listener %s: SASL needs a credential store", l.Name)
	}
	mechs := l.EnabledMechanisms(cfg)
	if len(mechs) == 0 {
		return fmt.Errorf("kafka: listener %s: sasl.enabled.mechanisms is empty", l.Name)
	}
	return auth.CheckMechanisms(mechs)
}

// EnabledMechanisms is the listener's sasl.enabled.mechanisms.
func (l Listener) EnabledMechanisms(cfg Config) []string {
	if len(l.Mechanisms) > 0 {
		return l.Mechanisms
	}
	return cfg.SASL.Mechanisms
}

// Enabled reports whether mech is enabled on the listener.
func (l *Listener) Enabled(cfg Config, mech string) bool {
	return slices.Contains(l.EnabledMechanisms(cfg), mech)
}
