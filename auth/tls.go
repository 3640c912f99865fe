package auth

// TLS from Kafka's ssl.* settings, with certificates re-read when their
// files change or on Reload (SIGHUP), for new connections only (TLS handshake timeouts and certificate reloads).

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// TLSOptions are a listener's ssl.* settings.
type TLSOptions struct {
	// KeystoreType is ssl.keystore.type; only PEM.
	KeystoreType string
	// KeystoreLocation is ssl.keystore.location: a PEM file holding the
	// private key (unencrypted) and the certificate chain, leaf first.
	KeystoreLocation string
	// TruststoreType is ssl.truststore.type; only PEM.
	TruststoreType string
	// TruststoreLocation is ssl.truststore.location: PEM CA certificates
	// that client certificates are verified against.
	TruststoreLocation string
	// ClientAuth is ssl.client.auth: none, requested or required.
	ClientAuth string
	// EnabledProtocols is ssl.enabled.protocols: TLSv1.2, TLSv1.3.
	EnabledProtocols []string
}

// TLS is a listener's TLS configuration, reloadable.
type TLS struct {
	opts    TLSOptions
	onError func(error) // a failed reload (the previous certificates stay)

	mu     sync.Mutex
	cur    *tls.Config
	stamps [2]fileStamp // keystore, truststore
}

// NewTLS loads the files named by opts; onError (may be nil) hears of
// later reloads that fail.
func NewTLS(opts TLSOptions, onError func(error)) (*TLS, error) {
	if opts.KeystoreType != "" && !strings.EqualFold(opts.KeystoreType, "PEM") {
		return nil, fmt.Errorf("auth: ssl.keystore.type %q: only PEM is supported", opts.KeystoreType)
	}
	if opts.TruststoreType != "" && !strings.EqualFold(opts.TruststoreType, "PEM") {
		return nil, fmt.Errorf("auth: ssl.truststore.type %q: only PEM is supported", opts.TruststoreType)
	}
	if opts.KeystoreLocation == "" {
		return nil, errors.New("auth: ssl.keystore.location is required for an SSL or SASL_SSL listener")
	}
	if _, err := clientAuthOf(opts.ClientAuth); err != nil {
		return nil, err
	}
	if _, _, err := versionsOf(opts.EnabledProtocols); err != nil {
		return nil, err
	}
	if onError == nil {
		onError = func(error) {}
	}
	t := &TLS{opts: opts, onError: onError}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Config is the tls.Config a listener serves with: each handshake takes
// the current certificates, re-reading the files first if they changed.
func (t *TLS) Config() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return t.current(), nil
	}}
}

func (t *TLS) current() *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stampsLocked() != t.stamps {
		if err := t.reloadLocked(); err != nil {
			t.onError(err)
		}
	}
	return t.cur
}

// Reload re-reads the files now (SIGHUP). On error the previous
// certificates stay in use.
func (t *TLS) Reload() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reloadLocked()
}

func (t *TLS) stampsLocked() [2]fileStamp {
	var st [2]fileStamp
	for i, p := range []string{t.opts.KeystoreLocation, t.opts.TruststoreLocation} {
		if fi, err := os.Stat(p); p != "" && err == nil {
			st[i] = stampOf(fi)
		}
	}
	return st
}

func (t *TLS) reloadLocked() error {
	stamps := t.stampsLocked()
	cfg, err := buildTLS(t.opts)
	// The stamps are taken before reading: a change during the read is
	// seen next time. A failed read is not retried until the files change.
	t.stamps = stamps
	if err != nil {
		return err
	}
	t.cur = cfg
	return nil
}

func buildTLS(o TLSOptions) (*tls.Config, error) {
	pemBytes, err := os.ReadFile(o.KeystoreLocation)
	if err != nil {
		return nil, fmt.Errorf("auth: ssl.keystore.location: %w", err)
	}
	// One PEM file holds both: X509KeyPair takes the certificates from
	// the first argument and the key from the second.
	cert, err := tls.X509KeyPair(pemBytes, pemBytes)
	if err != nil {
		return nil, fmt.Errorf("auth: ssl.keystore.location %s: %w", o.KeystoreLocation, err)
	}
	auth, _ := clientAuthOf(o.ClientAuth)
	lo, hi, _ := versionsOf(o.EnabledProtocols)
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: auth, MinVersion: lo, MaxVersion: hi}
	if o.TruststoreLocation != "" {
		ca, err := os.ReadFile(o.TruststoreLocation)
		if err != nil {
			return nil, fmt.Errorf("auth: ssl.truststore.location: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("auth: ssl.truststore.location %s: no PEM certificate", o.TruststoreLocation)
		}
		cfg.ClientCAs = pool
	} else if auth != tls.NoClientCert {
		return nil, errors.New("auth: ssl.client.auth needs ssl.truststore.location")
	}
	return cfg, nil
}

func clientAuthOf(s string) (tls.ClientAuthType, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return tls.NoClientCert, nil
	case "requested":
		return tls.VerifyClientCertIfGiven, nil
	case "required":
		return tls.RequireAndVerifyClientCert, nil
	}
	return 0, fmt.Errorf("auth: ssl.client.auth %q is not none, requested or required", s)
}

// versionsOf maps ssl.enabled.protocols to the lowest and highest version.
func versionsOf(protocols []string) (lo, hi uint16, err error) {
	if len(protocols) == 0 {
		protocols = []string{"TLSv1.2", "TLSv1.3"}
	}
	for _, p := range protocols {
		var v uint16
		switch strings.TrimSpace(p) {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		default:
			return 0, 0, fmt.Errorf("auth: ssl.enabled.protocols: %q is not TLSv1.2 or TLSv1.3", p)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}
