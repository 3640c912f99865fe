package main

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kgateway/kgateway/auth/authtest"
	"github.com/kgateway/kgateway/kafka"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Kafka's listener settings map onto listeners: names, protocols from
// listener.security.protocol.map, advertised.listeners by name, and
// listener.name.<name>. overrides of ssl.* and sasl.* settings.
func TestListenerSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "server.properties")
	props := strings.Join([]string{
		"listeners=PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093,SASL_SSL://0.0.0.0:9094",
		"advertised.listeners=SASL_SSL://kafka.example:9094",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
		"ssl.keystore.location=/etc/kg/server.pem",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"listener.name.internal.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
	}, "\n")
	if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := load("kgateway", []string{"--config", file}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := l.cfg.listenerSpecs()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, addr, advertised string
		proto                  kafka.SecurityProtocol
		mechs                  string
	}{
		{"PLAINTEXT", "127.0.0.1:9092", "", kafka.Plaintext, "SCRAM-SHA-512"},
		{"INTERNAL", "127.0.0.1:9093", "", kafka.SASLPlaintext, "PLAIN,SCRAM-SHA-256"},
		{"SASL_SSL", "0.0.0.0:9094", "kafka.example:9094", kafka.SASLSSL, "SCRAM-SHA-512"},
	}
	if len(specs) != len(want) {
		t.Fatalf("listeners %+v", specs)
	}
	for i, w := range want {
		sp := specs[i]
		if sp.Name != w.name || sp.Addr != w.addr || sp.Advertised != w.advertised || sp.Protocol != w.proto ||
			sp.setting("sasl.enabled.mechanisms") != w.mechs || sp.setting("ssl.keystore.location") != "/etc/kg/server.pem" {
			t.Errorf("listener %d: %+v mechanisms %q, want %+v", i, sp.Listener, sp.setting("sasl.enabled.mechanisms"), w)
		}
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--listeners", "PLAINTEXT://127.0.0.1:1", "--listen", "127.0.0.1:2"}, "listeners replaces it"},
		{[]string{"--listeners", "PLAINTEXT://127.0.0.1:1", "--advertised-listeners", "OTHER://h:1"}, "OTHER is not in listeners"},
		{[]string{"--listeners", "FOO://127.0.0.1:1"}, "FOO has no protocol"},
		{[]string{"--advertised-listeners", "PLAINTEXT://h:1"}, "advertised.listeners is set without listeners"},
		{[]string{"--listeners", "127.0.0.1:1"}, "is not NAME://host:port"},
		{[]string{"--listeners", "SSL://127.0.0.1:1"}, "needs ssl.keystore.location"},
		{[]string{"--listeners", "PLAINTEXT://127.0.0.1:1", "--listener-security-protocol-map", "PLAINTEXT:TLS"}, "unknown security protocol"},
		{[]string{"--sasl-enabled-mechanisms", "GSSAPI"}, "unsupported SASL mechanism"},
		{[]string{"--ssl-principal-mapping-rules", "RULE:x"}, "cannot parse"},
	} {
		if _, err := load("kgateway", bad.args, nil, os.Stderr); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: error %v, want %q", bad.args, err, bad.want)
		}
	}
}

// TLS handshake timeouts and certificate reloads: SIGHUP makes the running server re-read its certificates.
func TestSIGHUPReloadsCertificates(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	keystore := ca.Server("server.pem")
	l, err := load("kgateway", []string{"--data-dir", t.TempDir(), "--metrics-addr", "",
		"--listeners", "SSL://127.0.0.1:0", "--ssl-keystore-location", keystore}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, l, zap.New(core)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitLog(t, logs, "ready")
	addr := logs.FilterMessage("ready").All()[0].ContextMap()["addr"].(string)
	if c, err := tls.Dial("tcp", addr, ca.ClientTLS(t, "")); err != nil {
		t.Fatalf("TLS dial: %v", err)
	} else {
		c.Close()
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "tls-reloaded")
}

func waitLog(t *testing.T, logs *observer.ObservedLogs, msg string) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for logs.FilterMessage(msg).Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no %q log; logs: %v", msg, logs.All())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
