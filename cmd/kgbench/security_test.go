package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files in a temporary directory.
type testPKI struct {
	caFile, clientFile, clientKeyFile, bundleFile string
	server                                        tls.Certificate
	caPool                                        *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert, caDER := newCert(t, "kgbench test CA", nil, nil, true)
	p := &testPKI{caPool: x509.NewCertPool()}
	p.caPool.AddCert(caCert)
	p.caFile = writePEM(t, dir, "ca.pem", pemBlock("CERTIFICATE", caDER))

	srvKey, _, srvDER := newCert(t, "127.0.0.1", caCert, caKey, false)
	p.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}

	cliKey, _, cliDER := newCert(t, "bench-user", caCert, caKey, false)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	p.clientFile = writePEM(t, dir, "client.pem", pemBlock("CERTIFICATE", cliDER))
	p.clientKeyFile = writePEM(t, dir, "client.key", pemBlock("PRIVATE KEY", keyDER))
	p.bundleFile = writePEM(t, dir, "client-bundle.pem", pemBlock("CERTIFICATE", cliDER)+pemBlock("PRIVATE KEY", keyDER))
	return p
}

// newCert makes a key and a certificate for cn, signed by parent (self-
// signed when parent is nil), valid for 127.0.0.1.
func newCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, isCA bool) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  isCA,
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func pemBlock(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func writePEM(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSecurityFlagsValidation: each inconsistent combination is refused
// with a message naming the flag, and a plain run has no security options.
func TestSecurityFlagsValidation(t *testing.T) {
	pki := newTestPKI(t)
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--security-protocol", "TLS"}, "unknown --security-protocol"},
		{[]string{"--tls-ca", pki.caFile}, "--tls-ca needs --security-protocol SSL or SASL_SSL, not PLAINTEXT"},
		{[]string{"--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password", "p", "--tls-cert", pki.clientFile}, "--tls-cert needs"},
		{[]string{"--security-protocol", "SSL", "--tls-key", pki.clientKeyFile}, "--tls-key needs --tls-cert"},
		{[]string{"--security-protocol", "SSL", "--sasl-user", "u"}, "--sasl-* flags need"},
		{[]string{"--security-protocol", "SASL_SSL", "--sasl-user", "u", "--sasl-password", "p"}, "needs --sasl-mechanism"},
		{[]string{"--security-protocol", "SASL_SSL", "--sasl-mechanism", "GSSAPI", "--sasl-user", "u", "--sasl-password", "p"}, `got "GSSAPI"`},
		{[]string{"--security-protocol", "SASL_SSL", "--sasl-mechanism", "PLAIN", "--sasl-password", "p"}, "needs --sasl-user"},
		{[]string{"--security-protocol", "SASL_SSL", "--sasl-mechanism", "PLAIN", "--sasl-user", "u"}, "one of --sasl-password and --sasl-password-file"},
		{[]string{"--security-protocol", "SASL_SSL", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password", "p", "--sasl-password-file", "f"}, "one of --sasl-password and --sasl-password-file"},
		{[]string{"--security-protocol", "SSL", "--tls-ca", pki.clientKeyFile}, "--tls-ca: no PEM certificate"},
		{[]string{"--security-protocol", "SSL", "--tls-ca", "/nonexistent/ca.pem"}, "--tls-ca: open"},
		{[]string{"--security-protocol", "SSL", "--tls-cert", pki.clientFile}, "--tls-cert/--tls-key"}, // no key in it
		{[]string{"--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", "/nonexistent/pw"}, "--sasl-password-file: open"},
	} {
		_, err := parseFlags(tc.args)
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("parseFlags(%q): err %v, want one containing %q", tc.args, err, tc.wantErr)
		}
	}
	cfg, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Security.Protocol != "PLAINTEXT" || len(cfg.securityOpts) != 0 {
		t.Errorf("default security %+v, %d options", cfg.Security, len(cfg.securityOpts))
	}
}

// TestSecurityClientOptions builds the clients of a SASL_SSL configuration
// with mTLS: every client kgbench makes (the plain, the transactional and
// the consumers') carries the TLS config and the mechanism. The TLS config
// must complete a handshake with a server whose certificate the CA signed,
// presenting the client certificate, and fail against a server the CA did
// not sign.
func TestSecurityClientOptions(t *testing.T) {
	pki := newTestPKI(t)
	cfg, err := parseFlags([]string{"--security-protocol", "sasl_ssl", "--tls-ca", pki.caFile,
		"--tls-cert", pki.bundleFile, "--sasl-mechanism", "scram-sha-512", "--sasl-user", "bench", "--sasl-password", "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{cfg: cfg, sys: &system{name: "kgateway", addr: "127.0.0.1:1"}}
	clients := map[string]func() (*kgo.Client, error){
		"plain":         func() (*kgo.Client, error) { return b.client() },
		"transactional": b.txnClient,
		"consumer": func() (*kgo.Client, error) {
			cls, err := b.readCommittedConsumers()
			if err != nil {
				return nil, err
			}
			closeAll(cls[1:])
			return cls[0], nil
		},
	}
	for name, mk := range clients {
		cl, err := mk()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tlsCfg, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
		mechs, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
		cl.Close()
		if tlsCfg == nil || len(mechs) != 1 || mechs[0].Name() != "SCRAM-SHA-512" {
			t.Fatalf("%s client: TLS %v, SASL %v", name, tlsCfg, mechs)
		}
		if name != "plain" {
			continue
		}
		if err := handshake(tlsCfg, pki.server, pki.caPool, "bench-user"); err != nil {
			t.Errorf("handshake with a server the CA signed: %v", err)
		}
		strangerKey, _, strangerDER := newCert(t, "127.0.0.1", nil, nil, false) // self-signed
		other := tls.Certificate{Certificate: [][]byte{strangerDER}, PrivateKey: strangerKey}
		if err := handshake(tlsCfg, other, pki.caPool, ""); err == nil {
			t.Error("handshake with a server the CA did not sign succeeded")
		}
	}
}

// handshake runs a TLS handshake over loopback TCP between a client with
// cfg (ServerName 127.0.0.1, as franz-go fills it in for that address) and
// a server with cert that requires a client certificate from clientCAs. It
// checks the client certificate's common name when wantCN is set.
func handshake(cfg *tls.Config, cert tls.Certificate, clientCAs *x509.CertPool, wantCN string) error {
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs})
	if err != nil {
		return err
	}
	defer l.Close()
	srvErr := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer c.Close()
		srv := c.(*tls.Conn)
		err = srv.Handshake()
		if err == nil && wantCN != "" {
			if peers := srv.ConnectionState().PeerCertificates; len(peers) == 0 || peers[0].Subject.CommonName != wantCN {
				err = errors.New("server saw no client certificate for " + wantCN)
			}
		}
		srvErr <- err
	}()
	ccfg := cfg.Clone()
	if ccfg.ServerName == "" {
		ccfg.ServerName = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := (&tls.Dialer{Config: ccfg}).DialContext(ctx, "tcp", l.Addr().String())
	if err != nil {
		return err
	}
	// TLS 1.3 verifies the client certificate after the client's side
	// is done: a read makes the server's verdict arrive.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, readErr := c.Read(make([]byte, 1))
	c.Close()
	if err := <-srvErr; err != nil {
		return err
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) {
		return readErr
	}
	return nil
}

// TestSASLCredentials: PLAIN's first message carries the user and the
// password, read from the first line of --sasl-password-file without its
// line ending; SCRAM's names the user. The password is never written to
// the JSON results.
func TestSASLCredentials(t *testing.T) {
	pw := writePEM(t, t.TempDir(), "pw", "pa ss\r\nsecond line\n")
	cfg, err := parseFlags([]string{"--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN",
		"--sasl-user", "bench", "--sasl-password-file", pw})
	if err != nil {
		t.Fatal(err)
	}
	first := firstSASLMessage(t, cfg)
	if first != "\x00bench\x00pa ss" {
		t.Errorf("PLAIN message %q", first)
	}
	cfg, err = parseFlags([]string{"--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "SCRAM-SHA-256",
		"--sasl-user", "bench", "--sasl-password", "0nly-in-memory"})
	if err != nil {
		t.Fatal(err)
	}
	if first := firstSASLMessage(t, cfg); !strings.HasPrefix(first, "n,,n=bench,r=") {
		t.Errorf("SCRAM client-first message %q", first)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if err := writeJSON(out, newReport(cfg)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "0nly-in-memory") || !strings.Contains(string(b), `"sasl_user": "bench"`) {
		t.Errorf("JSON results:\n%s", b)
	}
}

// firstSASLMessage is what the configured mechanism sends first.
func firstSASLMessage(t *testing.T, cfg *config) string {
	t.Helper()
	cl, err := (&bench{cfg: cfg, sys: &system{addr: "127.0.0.1:1"}}).client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if v, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config); v != nil {
		t.Errorf("%s: client has a TLS config", cfg.Security.Protocol)
	}
	mechs, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
	if len(mechs) != 1 {
		t.Fatalf("mechanisms %v", mechs)
	}
	_, msg, err := mechs[0].Authenticate(context.Background(), "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}
