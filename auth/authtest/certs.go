// Package authtest makes what security tests need: a CA, server and
// client certificates in PEM files under a test's temporary directory,
// and the client TLS configurations that trust them.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority whose certificate is at CertFile.
type CA struct {
	t        testing.TB
	dir      string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	CertFile string // PEM: the CA certificate (a truststore)
	serial   int64
}

// NewCA makes a CA named cn in a fresh temporary directory.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{t: t, dir: t.TempDir(), cert: cert, key: key, serial: 1}
	ca.CertFile = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.CertFile, pemBlock("CERTIFICATE", der))
	return ca
}

// Pool is a pool holding the CA's certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server issues a certificate for 127.0.0.1 and localhost and writes a
// keystore (key then chain) to name in the CA's directory; it returns the
// file's path.
func (ca *CA) Server(name string) string {
	return ca.issue(name, pkix.Name{CommonName: "localhost"}, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate with subject and returns the path of
// its keystore file (key then chain).
func (ca *CA) Client(name string, subject pkix.Name) string {
	return ca.issue(name, subject, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(name string, subject pkix.Name, usage x509.ExtKeyUsage) string {
	t := ca.t
	t.Helper()
	ca.serial++
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ca.dir, name)
	writePEM(t, path, append(pemBlock("PRIVATE KEY", kder), pemBlock("CERTIFICATE", der)...))
	return path
}

// ClientTLS is a client configuration trusting the CA, presenting the
// keystore at keystore if it is not empty.
func (ca *CA) ClientTLS(t testing.TB, keystore string) *tls.Config {
	t.Helper()
	cfg := &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}
	if keystore != "" {
		b, err := os.ReadFile(keystore)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(b, b)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// SplitKeystore writes a keystore's key and certificate to two files (for
// clients such as kcat that want them apart) and returns their paths.
func SplitKeystore(t testing.TB, keystore string) (keyFile, certFile string) {
	t.Helper()
	b, err := os.ReadFile(keystore)
	if err != nil {
		t.Fatal(err)
	}
	var keyPEM, certPEM []byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			certPEM = append(certPEM, pem.EncodeToMemory(blk)...)
		} else {
			keyPEM = append(keyPEM, pem.EncodeToMemory(blk)...)
		}
	}
	keyFile, certFile = keystore+".key", keystore+".crt"
	writePEM(t, keyFile, keyPEM)
	writePEM(t, certFile, certPEM)
	return keyFile, certFile
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// writePEM replaces path atomically, so that a server watching it never
// reads half a file.
func writePEM(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
