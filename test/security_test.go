package test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/auth/authtest"
	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
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

// The per-listener advertised address: each listener advertises its own address: Metadata, FindCoordinator
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

// TLS handshake timeouts and certificate reloads: replacing the keystore file makes new connections get the new
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

// addUser stores user's SCRAM credentials (both mechanisms) in dir.
func addUser(t *testing.T, dir, user, password string) {
	t.Helper()
	store := auth.OpenStore(dir)
	for _, m := range []string{auth.ScramSHA256, auth.ScramSHA512} {
		c, err := auth.NewCredential(m, []byte(password), auth.MinIterations)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.SetCredential(user, m, c); err != nil {
			t.Fatal(err)
		}
	}
}

// saslConfig enables every mechanism, with a short failure delay.
func saslConfig() kafka.Config {
	return kafka.Config{SASL: kafka.SASLConfig{Mechanisms: auth.Mechanisms, FailedDelay: 10 * time.Millisecond}}
}

func mechanism(name, user, password string) sasl.Mechanism {
	switch name {
	case auth.Plain:
		return plain.Auth{User: user, Pass: password}.AsMechanism()
	case auth.ScramSHA256:
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism()
	}
	return scram.Auth{User: user, Pass: password}.AsSha512Mechanism()
}

// franz-go with sasl/plain and sasl/scram (SHA-256 and SHA-512) produces
// and consumes over SASL_PLAINTEXT and SASL_SSL.
func TestSASLFranzGo(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	dir := t.TempDir()
	addUser(t, dir, "alice", "alice-pw")
	saslSSL, _ := tlsListener(t, ca, "SASL_SSL", kafka.SASLSSL, "none")
	s := secureServer(t, dir, saslConfig(),
		kafka.Listener{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"}, saslSSL)
	for _, listener := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		for _, mech := range auth.Mechanisms {
			t.Run(listener+"/"+mech, func(t *testing.T) {
				opts := []kgo.Opt{kgo.SASL(mechanism(mech, "alice", "alice-pw"))}
				if listener == "SASL_SSL" {
					opts = append(opts, kgo.DialTLSConfig(ca.ClientTLS(t, "")))
				}
				addr := s.ListenerAddr(listener)
				topic := strings.ToLower(strings.ReplaceAll(listener+"-"+mech, "_", "-"))
				roundTrip(t, newClient(t, addr, opts...), topic, 10, newClient(t, addr, opts...))
			})
		}
	}
	if got := authMetric(t, s, "SASL_SSL", auth.ScramSHA512, "success"); got < 2 {
		t.Fatalf("SASL_SSL SCRAM-SHA-512 successes counted: %v", got)
	}
}

// The failed-authentication delay: a wrong password, then an unknown user: both are refused with
// SASL_AUTHENTICATION_FAILED, nothing is served to them, and both are
// counted as failures.
func TestSASLWrongPasswordThenUnknownUser(t *testing.T) {
	dir := t.TempDir()
	addUser(t, dir, "alice", "alice-pw")
	s := secureServer(t, dir, saslConfig(), kafka.Listener{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"})
	addr := s.ListenerAddr("SASL_PLAINTEXT")
	for _, tc := range []struct{ user, password string }{{"alice", "wrong"}, {"mallory", "alice-pw"}} {
		for _, mech := range auth.Mechanisms {
			cl := newClient(t, addr, kgo.SASL(mechanism(mech, tc.user, tc.password)), kgo.RequestRetries(0))
			_, err := cl.Request(testCtx(t), kmsg.NewPtrMetadataRequest())
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("%s %s: %v, want SASL_AUTHENTICATION_FAILED", tc.user, mech, err)
			}
		}
	}
	if got := authMetric(t, s, "SASL_PLAINTEXT", auth.ScramSHA256, "failure"); got != 2 {
		t.Fatalf("SCRAM-SHA-256 failures counted: %v, want 2", got)
	}
	if got := authMetric(t, s, "SASL_PLAINTEXT", auth.Plain, "success"); got != 0 {
		t.Fatalf("PLAIN successes counted: %v, want 0", got)
	}
}

// KIP-368 re-authentication: with connections.max.reauth.ms, franz-go re-authenticates on its
// open connection before the session ends and keeps producing; nothing
// fails across several session lifetimes.
func TestSASLReauthenticationFranzGo(t *testing.T) {
	const life = 2500 * time.Millisecond // franz-go re-authenticates 1s early
	dir := t.TempDir()
	addUser(t, dir, "alice", "alice-pw")
	kc := saslConfig()
	kc.SASL.ReauthAfter = life
	s := secureServer(t, dir, kc, kafka.Listener{Name: "SASL_PLAINTEXT", Protocol: kafka.SASLPlaintext, Addr: "127.0.0.1:0"})
	connects := &connectCounter{}
	cl := newClient(t, s.ListenerAddr("SASL_PLAINTEXT"), kgo.SASL(mechanism(auth.ScramSHA256, "alice", "alice-pw")),
		kgo.DefaultProduceTopic("reauth"), kgo.WithHooks(connects))
	start := time.Now()
	for i := 0; time.Since(start) < 3*life; i++ {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("produce %d after %v: %v", i, time.Since(start), err)
		}
		time.Sleep(life / 10) // paced: the test is about sessions ending over time
	}
	// One login per connection at first (a metadata one and a produce
	// one, at most), then re-authentications.
	if got := authMetric(t, s, "SASL_PLAINTEXT", auth.ScramSHA256, "success"); got < 4 {
		t.Fatalf("successful authentications: %v, want re-authentications beyond the first logins", got)
	}
	// Re-authenticated in place: no connection was dropped and redialed.
	// franz-go dials the seed, then broker 0 once for metadata and once
	// for produce.
	if n := connects.n.Load(); n > 3 {
		t.Fatalf("%d connections dialed, want 3 at most: the seed's and the broker's", n)
	}
}

// connectCounter is a kgo hook counting dialed connections.
type connectCounter struct{ n atomic.Int64 }

func (c *connectCounter) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		c.n.Add(1)
	}
}

// authMetric reads kgateway_authentications_total for one series.
func authMetric(t *testing.T, s *server.Server, listener, mech, result string) float64 {
	t.Helper()
	mfs, err := s.Metrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kgateway_authentications_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["listener"] == listener && labels["mechanism"] == mech && labels["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// kcat (librdkafka) over SASL_SSL with SCRAM-SHA-256, and over SSL with
// a client certificate: list, produce, consume.
func TestKcatSecurity(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	dir := t.TempDir()
	addUser(t, dir, "alice", "alice-pw")
	saslSSL, _ := tlsListener(t, ca, "SASL_SSL", kafka.SASLSSL, "none")
	ssl, _ := tlsListener(t, ca, "SSL", kafka.SSL, "required")
	s := secureServer(t, dir, saslConfig(), saslSSL, ssl)
	key, cert := authtest.SplitKeystore(t, ca.Client("kcat.pem", pkix.Name{CommonName: "kcat"}))
	for _, tc := range []struct {
		listener string
		args     []string
	}{
		{"SASL_SSL", []string{"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-256",
			"-X", "sasl.username=alice", "-X", "sasl.password=alice-pw", "-X", "ssl.ca.location=" + ca.CertFile}},
		{"SSL", []string{"-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + ca.CertFile,
			"-X", "ssl.certificate.location=" + cert, "-X", "ssl.key.location=" + key}},
	} {
		addr := s.ListenerAddr(tc.listener).String()
		topic := "kcat-" + strings.ToLower(strings.ReplaceAll(tc.listener, "_", "-"))
		arg := func(a ...string) []string { return append(append([]string{}, tc.args...), a...) }
		out := kcat(t, addr, "", arg("-L")...)
		if !strings.Contains(out, "broker 0 at "+addr) {
			t.Fatalf("%s: kcat -L:\n%s", tc.listener, out)
		}
		kcat(t, addr, "one\ntwo\nthree\n", arg("-P", "-t", topic)...)
		out = kcat(t, addr, "", arg("-C", "-t", topic, "-o", "beginning", "-e", "-f", "%s\n")...)
		if strings.TrimSpace(out) != "one\ntwo\nthree" {
			t.Fatalf("%s: kcat -C printed %q", tc.listener, out)
		}
	}
}
