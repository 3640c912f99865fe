package config

import (
	"strings"
	"testing"

	"github.com/kgateway/kgateway/resolver"
)

func TestConfigValidateReportsEverything(t *testing.T) {
	err := Config{MaxRequestBytes: -1, NodeID: -2, AdvertisedAddr: "0.0.0.0:9092"}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Resolver", "socket.request.max.bytes", "node.id", "unspecified"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from %v", want, err)
		}
	}
}

func TestLimitsConfigValidate(t *testing.T) {
	res := new(resolver.Resolver)
	err := Config{Resolver: res, MaxRequestBytes: 1 << 20, QueuedMaxRequestBytes: 1 << 19,
		ConnectionsMaxIdle: -1, MaxConnections: -1}.Validate()
	for _, want := range []string{"queued.max.request.bytes", "connections.max.idle.ms", "max.connections"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from %v", want, err)
		}
	}
	cfg := Config{Resolver: res, MaxRequestBytes: 600 << 20}.WithDefaults()
	if cfg.QueuedMaxRequestBytes != 600<<20 || cfg.ConnectionsMaxIdle != DefaultConnectionsMaxIdle || cfg.MaxConnections != DefaultMaxConnections {
		t.Fatalf("defaults %d %v %d", cfg.QueuedMaxRequestBytes, cfg.ConnectionsMaxIdle, cfg.MaxConnections)
	}
}
