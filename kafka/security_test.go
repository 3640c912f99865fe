package kafka

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"net"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/auth/authtest"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startListener serves cfg on one listener l at an ephemeral port until
// the test ends; cfg gets a credential store in a temporary directory.
func startListener(t *testing.T, cfg Config, l Listener) (*Server, net.Addr) {
	t.Helper()
	if cfg.Resolver == nil {
		cfg.Resolver = new(resolver.Resolver)
	}
	if cfg.SASL.Credentials == nil {
		cfg.SASL.Credentials = auth.OpenStore(t.TempDir())
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartListener(ln, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s, ln.Addr()
}

// serverTLS is a TLS listener configuration over files of ca.
func serverTLS(t *testing.T, ca *authtest.CA, clientAuth string) *tls.Config {
	t.Helper()
	tc, err := auth.NewTLS(auth.TLSOptions{KeystoreType: "PEM", KeystoreLocation: ca.Server("server.pem"),
		TruststoreLocation: ca.CertFile, ClientAuth: clientAuth}, func(err error) { t.Errorf("tls reload: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	return tc.Config()
}

// TLS handshake timeouts and certificate reloads: a client that opens a TCP connection to a TLS listener and never
// sends a ClientHello is closed after the handshake timeout, not kept
// until connections.max.idle.ms.
func TestTLSHandshakeTimeout(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	_, addr := startListener(t, Config{TLSHandshakeTimeout: 200 * time.Millisecond},
		Listener{Name: "SSL", Protocol: SSL, TLS: serverTLS(t, ca, "none")})
	c := dialRaw(t, addr)
	c.nc.SetDeadline(time.Now().Add(5 * time.Second)) // well under idle (10 min)
	c.expectClosed()
}

// The principal mapping: on an SSL listener the principal is the client certificate's
// subject mapped by ssl.principal.mapping.rules; without a certificate it
// is User:ANONYMOUS.
func TestMTLSPrincipal(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	mapper, err := auth.NewPrincipalMapper(`RULE:^CN=([^,]+),OU=eng.*$/$1/L,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	s, addr := startListener(t, Config{}, Listener{Name: "SSL", Protocol: SSL,
		TLS: serverTLS(t, ca, "requested"), PrincipalMapper: mapper})
	for _, tc := range []struct {
		subject *pkix.Name
		want    string
	}{
		{&pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"kg"}}, "User:alice"},
		{&pkix.Name{CommonName: "bob", Organization: []string{"kg"}}, "User:CN=bob,O=kg"},
		{nil, auth.Anonymous},
	} {
		keystore := ""
		if tc.subject != nil {
			keystore = ca.Client(tc.subject.CommonName+".pem", *tc.subject)
		}
		nc, err := tls.Dial("tcp", addr.String(), ca.ClientTLS(t, keystore))
		if err != nil {
			t.Fatal(err)
		}
		c := &rawConn{t: t, nc: nc}
		nc.SetDeadline(time.Now().Add(testDeadline))
		req := kmsg.NewPtrApiVersionsRequest()
		c.send(1, req)
		resp := kmsg.NewPtrApiVersionsResponse()
		c.recv(resp)
		if got := s.principals(); len(got) != 1 || got[0] != tc.want {
			t.Errorf("subject %v: principals %v, want [%s]", tc.subject, got, tc.want)
		}
		nc.Close()
		waitFor(t, "connection closed", func() bool { return s.openConns() == 0 })
	}
}

// principals lists the open connections' principals.
func (s *Server) principals() []string {
	var out []string
	for _, h := range s.open.Handlers() {
		out = append(out, h.(*conn).Principal())
	}
	return out
}
