package main

import (
	"context"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kfake started by serve-kfake with --kfake-keystore and the clients' SASL
// settings serves SASL_SSL to kgbench's own clients, so it can run beside
// a secured kgateway; a client that skips TLS gets nowhere.
func TestKfakeServesTheClientsSecurity(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	srvKey, err := x509.MarshalPKCS8PrivateKey(pki.server.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keystore := writePEM(t, dir, "keystore.pem", pemBlock("PRIVATE KEY", srvKey)+pemBlock("CERTIFICATE", pki.server.Certificate[0]))
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"--security-protocol", "SASL_SSL", "--tls-ca", pki.caFile, "--kfake-keystore", keystore,
		"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "bench", "--sasl-password-file", passFile})
	if err != nil {
		t.Fatal(err)
	}
	args := kfakeSecurityArgs(cfg)
	if want := []string{"--tls-keystore", keystore, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "bench",
		"--sasl-password-file", passFile}; !slices.Equal(args, want) {
		t.Fatalf("serve-kfake args %q, want %q", args, want)
	}
	opts, err := kfakeSecurityOpts(keystore, "SCRAM-SHA-256", "bench", passFile)
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	c, err := kfake.NewCluster(append(opts, kfake.Ports(port))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	secure, err := cfg.Security.clientOpts()
	if err != nil {
		t.Fatal(err)
	}
	if err := ping(addr, secure...); err != nil {
		t.Fatalf("SASL_SSL client: %v", err)
	}
	if err := ping(addr); err == nil {
		t.Fatal("a plaintext client was served")
	}
}

func ping(addr string, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(addr))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
