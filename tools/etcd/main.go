// Command etcd runs a single-member etcd (go.etcd.io/etcd/server/v3/embed,
// the server the tests embed) for a kgateway cluster on a machine without
// an etcd binary:
//
//	go run ./tools/etcd --data-dir ./etcd-data --listen-client-urls http://127.0.0.1:2379
//
// It serves until SIGINT or SIGTERM and keeps its data in --data-dir
// across runs. It is for trying cluster mode on one machine: one member,
// no TLS, no authentication.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// config is the command line.
type config struct {
	dataDir    string
	clientURLs string
	peerURLs   string
	logLevel   string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.dataDir, "data-dir", "etcd-data", "directory of etcd's data, kept across runs")
	flag.StringVar(&cfg.clientURLs, "listen-client-urls", "http://127.0.0.1:2379", "comma-separated URLs to serve clients on (kgateway's --cluster-etcd-endpoints)")
	flag.StringVar(&cfg.peerURLs, "listen-peer-urls", "http://127.0.0.1:2380", "comma-separated URLs for the (single) member's peer traffic")
	flag.StringVar(&cfg.logLevel, "log-level", "error", "etcd's log level: debug, info, warn, error")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, cfg, func(clients []string) {
		fmt.Fprintf(os.Stderr, "etcd ready: clients on %s, data in %s\n", strings.Join(clients, ","), cfg.dataDir)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

// run serves etcd until ctx ends; ready gets the bound client URLs.
func run(ctx context.Context, c config, ready func(clients []string)) error {
	clients, err := parseURLs(c.clientURLs)
	if err != nil {
		return fmt.Errorf("--listen-client-urls: %w", err)
	}
	peers, err := parseURLs(c.peerURLs)
	if err != nil {
		return fmt.Errorf("--listen-peer-urls: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "kgateway-etcd"
	cfg.Dir = c.dataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = clients, clients
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = peers, peers
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = c.logLevel
	// Every group commit of a cluster writes etcd: without compaction of
	// its history, etcd's database grows until it hits its quota.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"
	cfg.Logger = "zap"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return err
	case <-time.After(time.Minute):
		return errors.New("not ready within a minute")
	}
	bound := make([]string, len(e.Clients))
	for i, l := range e.Clients {
		u := clients[min(i, len(clients)-1)]
		u.Host = l.Addr().String()
		bound[i] = u.String()
	}
	ready(bound)
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return err
	}
}

func parseURLs(s string) ([]url.URL, error) {
	var out []url.URL
	for _, part := range strings.Split(s, ",") {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("%q: want http://host:port", part)
		}
		out = append(out, *u)
	}
	return out, nil
}
