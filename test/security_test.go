package test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/auth/authtest"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// secureServer opens a server over a temporary directory with listeners
// (and cfg's Kafka settings), serving until the test ends.
func secureServer(t *testing.T, dir string, kc kafka.Config, listeners ...kafka.Listener) *server.Server {
	t.Helper()
	s := startServer(t, server.Config{DataDir: dir, Listeners: listeners, Kafka: kc,
		Resolver: resolver.Config{NumPartitions: 1, AutoCreate: true}})
	t.Cleanup(func() { s.Close() })
	return s
}

// tlsListener is an SSL or SASL_SSL listener with a certificate of ca.
func tlsListener(t *testing.T, ca *authtest.CA, name string, proto kafka.SecurityProtocol, clientAuth string) (kafka.Listener, *auth.TLS) {
	t.Helper()
	tc, err := auth.NewTLS(auth.TLSOptions{KeystoreLocation: ca.Server(name + ".pem"), TruststoreLocation: ca.CertFile,
		ClientAuth: clientAuth}, func(err error) { t.Errorf("tls reload: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Listener{Name: name, Protocol: proto, Addr: "127.0.0.1:0", TLS: tc.Config()}, tc
}

func newClient(t *testing.T, addr net.Addr, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr.String()), kgo.ProducerLinger(0),
		kgo.RetryTimeout(5 * time.Second), kgo.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// seedRequest sends req on the connection to the seed broker itself, so
// that the answer comes from the listener the client dialed.
func seedRequest[R kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatalf("request key %d: %v", req.Key(), err)
	}
	return resp.(R)
}

// roundTrip produces n records to topic through cl and reads them back
// with a second client made by newCl.
func roundTrip(t *testing.T, cl *kgo.Client, topic string, n int, consumer *kgo.Client) {
	t.Helper()
	for i := range n {
		r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}
		if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	consumer.AddConsumeTopics(topic)
	got := 0
	for got < n {
		fs := consumer.PollFetches(testCtx(t))
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want := fmt.Sprintf("v%d", got); string(r.Value) != want {
				t.Fatalf("record %d = %q, want %q", got, r.Value, want)
			}
			got++
		})
	}
}

// A7: each listener advertises its own address: Metadata, FindCoordinator
// and DescribeCluster answer a client on PLAINTEXT with the address it
// dialed and a client on INTERNAL with INTERNAL's advertised.listeners
// entry.
func TestListenersAdvertiseTheirOwnAddress(t *testing.T) {
	s := secureServer(t, t.TempDir(), kafka.Config{},
		kafka.Listener{Name: "PLAINTEXT", Protocol: kafka.Plaintext, Addr: "127.0.0.1:0"},
		kafka.Listener{Name: "INTERNAL", Protocol: kafka.Plaintext, Addr: "127.0.0.1:0", Advertised: "internal.example:19093"})
	for _, tc := range []struct {
		listener string
		host     string
		port     int32
	}{
		{"PLAINTEXT", "127.0.0.1", int32(s.ListenerAddr("PLAINTEXT").(*net.TCPAddr).Port)},
		{"INTERNAL", "internal.example", 19093},
	} {
		cl := newClient(t, s.ListenerAddr(tc.listener))
		md := seedRequest[*kmsg.MetadataResponse](t, cl, kmsg.NewPtrMetadataRequest())
		if b := md.Brokers; len(b) != 1 || b[0].Host != tc.host || b[0].Port != tc.port {
			t.Errorf("%s: Metadata brokers %+v, want %s:%d", tc.listener, b, tc.host, tc.port)
		}
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = "g", []string{"g"}
		fr := seedRequest[*kmsg.FindCoordinatorResponse](t, cl, fc)
		if c := fr.Coordinators; len(c) != 1 || c[0].Host != tc.host || c[0].Port != tc.port {
			t.Errorf("%s: FindCoordinator %+v, want %s:%d", tc.listener, fr, tc.host, tc.port)
		}
		dc := seedRequest[*kmsg.DescribeClusterResponse](t, cl, kmsg.NewPtrDescribeClusterRequest())
		if b := dc.Brokers; len(b) != 1 || b[0].Host != tc.host || b[0].Port != tc.port {
			t.Errorf("%s: DescribeCluster brokers %+v, want %s:%d", tc.listener, b, tc.host, tc.port)
		}
	}
}

// An SSL listener beside a PLAINTEXT one: franz-go produces over TLS and
// consumes over plaintext, and the other way round.
func TestSSLListenerFranzGo(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	ssl, _ := tlsListener(t, ca, "SSL", kafka.SSL, "none")
	s := secureServer(t, t.TempDir(), kafka.Config{},
		kafka.Listener{Name: "PLAINTEXT", Protocol: kafka.Plaintext, Addr: "127.0.0.1:0"}, ssl)
	tlsCl := newClient(t, s.ListenerAddr("SSL"), kgo.DialTLSConfig(ca.ClientTLS(t, "")))
	plainCl := newClient(t, s.ListenerAddr("PLAINTEXT"))
	roundTrip(t, tlsCl, "over-tls", 20, newClient(t, s.ListenerAddr("PLAINTEXT")))
	roundTrip(t, plainCl, "to-tls", 20, newClient(t, s.ListenerAddr("SSL"), kgo.DialTLSConfig(ca.ClientTLS(t, ""))))
	// A plaintext client on the TLS port gets nowhere.
	bad := newClient(t, s.ListenerAddr("SSL"), kgo.RequestRetries(0))
	if _, err := bad.Request(testCtx(t), kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("plaintext Metadata on the SSL listener succeeded")
	}
}

// ssl.client.auth=required: a client without a certificate is refused
// at the handshake; one with a certificate of the CA is served.
func TestSSLClientAuthRequired(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	ssl, _ := tlsListener(t, ca, "SSL", kafka.SSL, "required")
	s := secureServer(t, t.TempDir(), kafka.Config{}, ssl)
	addr := s.ListenerAddr("SSL")
	noCert := newClient(t, addr, kgo.DialTLSConfig(ca.ClientTLS(t, "")), kgo.RequestRetries(0))
	if _, err := noCert.Request(testCtx(t), kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	other := authtest.NewCA(t, "other")
	foreign := newClient(t, addr, kgo.DialTLSConfig(ca.ClientTLS(t, other.Client("x.pem", pkix.Name{CommonName: "x"}))), kgo.RequestRetries(0))
	if _, err := foreign.Request(testCtx(t), kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("a client with a certificate of another CA was served")
	}
	withCert := ca.ClientTLS(t, ca.Client("alice.pem", pkix.Name{CommonName: "alice"}))
	roundTrip(t, newClient(t, addr, kgo.DialTLSConfig(withCert)), "mtls", 5, newClient(t, addr, kgo.DialTLSConfig(withCert)))
}

// A5: replacing the keystore file makes new connections get the new
// certificate while a connection opened before keeps working on its
// session, without being dropped.
func TestTLSReloadKeepsConnections(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	ssl, _ := tlsListener(t, ca, "SSL", kafka.SSL, "none")
	s := secureServer(t, t.TempDir(), kafka.Config{}, ssl)
	addr := s.ListenerAddr("SSL").String()
	old, err := tls.Dial("tcp", addr, ca.ClientTLS(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	apiVersions(t, old, 1)

	// The keystore now holds a certificate of another CA.
	ca2 := authtest.NewCA(t, "ca2")
	keystore := ca.Server("SSL.pem") // the path the listener reads
	b, err := os.ReadFile(ca2.Server("next.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keystore+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(keystore+".new", keystore); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.Dial("tcp", addr, ca.ClientTLS(t, "")); err == nil {
		t.Fatal("the old CA still verifies new connections after the keystore changed")
	}
	fresh, err := tls.Dial("tcp", addr, ca2.ClientTLS(t, ""))
	if err != nil {
		t.Fatalf("a client trusting the new CA: %v", err)
	}
	fresh.Close()
	apiVersions(t, old, 2) // the old connection was not dropped
}

// apiVersions sends ApiVersions v0 on nc and reads its answer.
func apiVersions(t *testing.T, nc net.Conn, corr int32) {
	t.Helper()
	nc.SetDeadline(time.Now().Add(testDeadline))
	req := []byte{0, 0, 0, 10, 0, 18, 0, 0, byte(corr >> 24), byte(corr >> 16), byte(corr >> 8), byte(corr), 0xff, 0xff}
	if _, err := nc.Write(req); err != nil {
		t.Fatalf("ApiVersions write: %v", err)
	}
	var hdr [8]byte
	if _, err := readFull(nc, hdr[:]); err != nil {
		t.Fatalf("ApiVersions read: %v", err)
	}
	size := int(hdr[0])<<24 | int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
	if got := int32(hdr[4])<<24 | int32(hdr[5])<<16 | int32(hdr[6])<<8 | int32(hdr[7]); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	if _, err := readFull(nc, make([]byte, size-4)); err != nil {
		t.Fatal(err)
	}
}

func readFull(nc net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := nc.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

var _ = strings.Contains
