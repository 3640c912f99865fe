package main

// security.go turns the client security flags into franz-go options that
// every client kgbench makes carries (bench.clientOpts). The names follow
// Kafka's client configuration: --security-protocol is security.protocol
// (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), --sasl-mechanism is
// sasl.mechanism. Only the client side lives here: the server under test
// must be started with a matching listener (--kgateway-args, with {addr}
// for the address kgbench chose).
//
// The password never reaches the JSON results (security.SASLPassword has
// no JSON name); --sasl-password-file keeps it off the command line too.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// security is the client side of --security-protocol and its companions.
type security struct {
	Protocol         string `json:"security_protocol"`            // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
	TLSCAFile        string `json:"tls_ca_file,omitempty"`        // PEM CAs to trust ("" = the system's)
	TLSCertFile      string `json:"tls_cert_file,omitempty"`      // PEM client certificate chain (mTLS)
	TLSKeyFile       string `json:"tls_key_file,omitempty"`       // PEM key of it ("" = in TLSCertFile)
	TLSServerName    string `json:"tls_server_name,omitempty"`    // name to verify ("" = the dialed host)
	SASLMechanism    string `json:"sasl_mechanism,omitempty"`     // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	SASLUser         string `json:"sasl_user,omitempty"`          //
	SASLPassword     string `json:"-"`                            // never written out
	SASLPasswordFile string `json:"sasl_password_file,omitempty"` // first line is the password
}

var (
	securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}
	saslMechanisms    = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
)

func (s *security) usesTLS() bool  { return s.Protocol == "SSL" || s.Protocol == "SASL_SSL" }
func (s *security) usesSASL() bool { return strings.HasPrefix(s.Protocol, "SASL_") }

// normalize upper-cases the protocol and mechanism, as Kafka's clients
// accept them in any case.
func (s *security) normalize() {
	s.Protocol = strings.ToUpper(strings.TrimSpace(s.Protocol))
	s.SASLMechanism = strings.ToUpper(strings.TrimSpace(s.SASLMechanism))
	if s.Protocol == "" {
		s.Protocol = "PLAINTEXT"
	}
}

// validate reports every inconsistency through bad: flags of TLS or SASL
// given without a protocol that uses them are mistakes, not ignored.
func (s *security) validate(bad func(format string, a ...any)) {
	if !slices.Contains(securityProtocols, s.Protocol) {
		bad("unknown --security-protocol %q (want %s)", s.Protocol, strings.Join(securityProtocols, ", "))
		return
	}
	if !s.usesTLS() {
		for _, f := range []struct{ flag, v string }{{"--tls-ca", s.TLSCAFile}, {"--tls-cert", s.TLSCertFile},
			{"--tls-key", s.TLSKeyFile}, {"--tls-server-name", s.TLSServerName}} {
			if f.v != "" {
				bad("%s needs --security-protocol SSL or SASL_SSL, not %s", f.flag, s.Protocol)
			}
		}
	}
	if s.TLSKeyFile != "" && s.TLSCertFile == "" {
		bad("--tls-key needs --tls-cert")
	}
	if !s.usesSASL() {
		if s.SASLMechanism != "" || s.SASLUser != "" || s.SASLPassword != "" || s.SASLPasswordFile != "" {
			bad("--sasl-* flags need --security-protocol SASL_PLAINTEXT or SASL_SSL, not %s", s.Protocol)
		}
		return
	}
	if !slices.Contains(saslMechanisms, s.SASLMechanism) {
		bad("--security-protocol %s needs --sasl-mechanism %s, got %q", s.Protocol, strings.Join(saslMechanisms, ", "), s.SASLMechanism)
	}
	if s.SASLUser == "" {
		bad("--security-protocol %s needs --sasl-user", s.Protocol)
	}
	if (s.SASLPassword == "") == (s.SASLPasswordFile == "") {
		bad("--security-protocol %s needs one of --sasl-password and --sasl-password-file", s.Protocol)
	}
}

// clientOpts reads the files the flags name and returns the franz-go
// options: none for PLAINTEXT.
func (s *security) clientOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.usesTLS() {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.usesSASL() {
		m, err := s.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// tlsConfig trusts --tls-ca (or the system's CAs) and presents --tls-cert
// when set. franz-go sets ServerName to the dialed host when it is empty.
func (s *security) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.TLSServerName}
	if s.TLSCAFile != "" {
		pem, err := os.ReadFile(s.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca: no PEM certificate in %s", s.TLSCAFile)
		}
	}
	if s.TLSCertFile != "" {
		keyFile := s.TLSKeyFile
		if keyFile == "" {
			keyFile = s.TLSCertFile // one PEM with the chain and the key, as Kafka's PEM keystore
		}
		cert, err := tls.LoadX509KeyPair(s.TLSCertFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// mechanism is the SASL mechanism with the user and password.
func (s *security) mechanism() (sasl.Mechanism, error) {
	pass, err := s.password()
	if err != nil {
		return nil, err
	}
	switch s.SASLMechanism {
	case "PLAIN":
		return plain.Auth{User: s.SASLUser, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: s.SASLUser, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: s.SASLUser, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("%w: unknown --sasl-mechanism %q", errConfig, s.SASLMechanism)
}

// password is --sasl-password, or the first line of --sasl-password-file
// (its line ending is not part of it).
func (s *security) password() (string, error) {
	if s.SASLPasswordFile == "" {
		return s.SASLPassword, nil
	}
	b, err := os.ReadFile(s.SASLPasswordFile)
	if err != nil {
		return "", fmt.Errorf("--sasl-password-file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", errors.New("--sasl-password-file: the first line is empty")
	}
	return line, nil
}
