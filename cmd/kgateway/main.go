// Command kgateway serves the Kafka protocol with every topic-partition
// stored as a managed ledger on local disk (see DESIGN.md).
//
//	kgateway --listen 127.0.0.1:9092 --data-dir ./data
//
// SIGINT or SIGTERM stops accepting, lets in-flight requests finish, then
// closes the resolver and the store (which syncs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kgateway/kgateway/kafka"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// options are the command line, mirroring the Kafka config names.
type options struct {
	listen          string // listeners
	advertised      string // advertised.listeners
	dataDir         string // log.dirs
	logLevel        string
	numPartitions   int   // num.partitions
	autoCreate      bool  // auto.create.topics.enable
	maxRequestBytes int   // socket.request.max.bytes
	queuedMaxBytes  int64 // queued.max.request.bytes
	maxIdleMs       int64 // connections.max.idle.ms
	maxConnections  int   // max.connections
	logs            logOptions
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("kgateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:9092", "address to serve the Kafka protocol on (listeners)")
	fs.StringVar(&o.advertised, "advertised-addr", "", "host:port clients are told to dial (advertised.listeners); empty: the address each client dialed")
	fs.StringVar(&o.dataDir, "data-dir", "./data", "directory for segment files and the index (log.dirs)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&o.numPartitions, "num-partitions", 1, "partitions of an auto-created topic (num.partitions)")
	fs.BoolVar(&o.autoCreate, "auto-create-topics", true, "create unknown topics on Metadata and Produce (auto.create.topics.enable)")
	fs.IntVar(&o.maxRequestBytes, "max-request-bytes", kafka.DefaultMaxRequestBytes, "largest request frame accepted (socket.request.max.bytes)")
	fs.Int64Var(&o.queuedMaxBytes, "queued-max-request-bytes", kafka.DefaultQueuedMaxRequestBytes, "most request bytes read and not yet answered, server-wide; beyond it the server stops reading sockets (queued.max.request.bytes)")
	fs.Int64Var(&o.maxIdleMs, "connections-max-idle-ms", kafka.DefaultConnectionsMaxIdle.Milliseconds(), "close a connection idle this long (connections.max.idle.ms)")
	fs.IntVar(&o.maxConnections, "max-connections", kafka.DefaultMaxConnections, "most open connections; more are closed at once (max.connections)")
	o.logs.register(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, o.validate()
}

// validate reports every flag problem at once; kafka.Config.Validate
// checks the rest once the layers exist.
func (o options) validate() error {
	var errs []error
	if o.dataDir == "" {
		errs = append(errs, errors.New("--data-dir is empty"))
	}
	if o.numPartitions < 1 || o.numPartitions > 1<<20 {
		errs = append(errs, fmt.Errorf("--num-partitions %d out of range [1, %d]", o.numPartitions, 1<<20))
	}
	if o.maxRequestBytes < 1 || o.maxRequestBytes > 1<<30 {
		errs = append(errs, fmt.Errorf("--max-request-bytes %d out of range [1, %d]", o.maxRequestBytes, 1<<30))
	}
	if o.queuedMaxBytes < int64(o.maxRequestBytes) {
		errs = append(errs, fmt.Errorf("--queued-max-request-bytes %d is below --max-request-bytes %d", o.queuedMaxBytes, o.maxRequestBytes))
	}
	if o.maxIdleMs < 1 {
		errs = append(errs, fmt.Errorf("--connections-max-idle-ms %d must be positive", o.maxIdleMs))
	}
	if o.maxConnections < 1 {
		errs = append(errs, fmt.Errorf("--max-connections %d must be positive", o.maxConnections))
	}
	if err := o.logs.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.resolverConfig(nil).Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := zapcore.ParseLevel(o.logLevel); err != nil {
		errs = append(errs, fmt.Errorf("--log-level: %w", err))
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen: %w", err))
	}
	return errors.Join(errs...)
}

func newLogger(level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Sampling = nil
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	return cfg.Build()
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgateway:", err)
		os.Exit(2)
	}
	log, err := newLogger(o.logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgateway:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, log); err != nil {
		log.Error("exit", zap.Error(err))
		log.Sync()
		os.Exit(1)
	}
	log.Sync()
}

// run wires storage -> resolver -> kafka server and serves until ctx ends,
// then shuts down in the reverse order.
func run(ctx context.Context, o options, log *zap.Logger) (err error) {
	store, err := storage.Open(o.dataDir, storage.Options{Logger: log.Named("storage")})
	if err != nil {
		return fmt.Errorf("open storage: %w", err)
	}
	defer func() { err = errors.Join(err, store.Close()) }()

	res, err := resolver.Open(store, o.resolverConfig(log.Named("resolver")))
	if err != nil {
		return fmt.Errorf("open resolver: %w", err)
	}
	defer func() { err = errors.Join(err, res.Close()) }()

	// O3: group offsets live in their own pebble instance, apart from the
	// ledger index.
	offs, err := offsets.Open(filepath.Join(o.dataDir, "offsets"), offsets.Options{Logger: log.Named("offsets")})
	if err != nil {
		return fmt.Errorf("open offsets: %w", err)
	}
	defer func() { err = errors.Join(err, offs.Close()) }()

	srv, err := kafka.NewServer(kafka.Config{
		Offsets:               offs,
		Resolver:              res,
		AdvertisedAddr:        o.advertised,
		MaxRequestBytes:       int32(o.maxRequestBytes),
		QueuedMaxRequestBytes: o.queuedMaxBytes,
		ConnectionsMaxIdle:    time.Duration(o.maxIdleMs) * time.Millisecond,
		MaxConnections:        o.maxConnections,
		Logger:                log.Named("kafka"),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("ready", zap.Stringer("addr", ln.Addr()), zap.String("data-dir", o.dataDir))

	select {
	case <-ctx.Done():
		log.Info("shutting-down")
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	if err := srv.Close(); err != nil {
		return err
	}
	<-served
	log.Info("stopped-serving")
	return nil
}
