// Command kgateway serves the Kafka protocol with every topic-partition
// stored as a managed ledger on local disk (see docs/DESIGN.md).
//
//	kgateway --listen 127.0.0.1:9092 --data-dir ./data
//	kgateway config | inspect | explain TOPIC PARTITION OFFSET | verify | apis
//
// Configuration comes from defaults, a server.properties-style --config
// file, KGATEWAY_* environment variables and flags, in that order of
// precedence (config.go). SIGINT or SIGTERM stops accepting, lets
// in-flight requests finish, then closes the resolver and the store (which
// syncs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/kgateway/kgateway/logging"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs one command and returns the exit code: 0 success, 1 a
// failure (or corruption found by verify), 2 bad usage or configuration.
func runMain(args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	commands := map[string]func(loaded, io.Writer, io.Writer) error{
		"serve": serveCmd, "config": configCmd, "inspect": inspectCmd,
		"explain": explainCmd, "verify": verifyCmd, "apis": apisCmd, "users": usersCmd,
		"cluster": clusterCmd,
	}
	run, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(stderr, "kgateway: unknown command %q\n", cmd)
		fmt.Fprint(stderr, commandsHelp)
		return 2
	}
	name := "kgateway"
	if cmd != "serve" {
		name = cmd
	}
	args, extra := splitCmdFlags(cmd, args)
	var action []string
	if cmd == "cluster" {
		action, args = splitWords(args)
	}
	var uo usersOpts
	if cmd == "users" {
		var err error
		if args, uo, err = splitUsersArgs(args); err != nil {
			fmt.Fprintln(stderr, "kgateway users:", err)
			return 2
		}
	}
	l, err := load(name, args, stdEnv(), stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "kgateway:", err)
		return 2
	}
	l.extra, l.users, l.stdin = extra, uo, stdin
	if cmd == "cluster" {
		l.args = append(action, l.args...)
	}
	if cmd != "serve" { // serve logs them (serveCmd)
		for _, k := range l.unknownEnv {
			fmt.Fprintf(stderr, "kgateway: warning: ignoring unknown environment variable %s\n", k)
		}
	}
	if err := run(l, stdout, stderr); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "kgateway:", err)
			return 2
		}
		fmt.Fprintln(stderr, "kgateway:", err)
		return 1
	}
	return 0
}

// stdin is where commands read input (users add's password); tests
// replace it.
var stdin io.Reader = os.Stdin

// usageError is a command-line problem (exit 2).
type usageError struct{ error }

// splitCmdFlags takes the command's own flags (not configuration) out of
// args.
func splitCmdFlags(cmd string, args []string) (rest []string, extra map[string]bool) {
	own := map[string][]string{"config": {"--reference"}, "apis": {"--markdown"}}[cmd]
	extra = map[string]bool{}
	for _, a := range args {
		if i := indexOf(own, a); i >= 0 {
			extra[a] = true
			continue
		}
		rest = append(rest, a)
	}
	return rest, extra
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func newLogger(level, format string, w zapcore.WriteSyncer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	if format == "console" {
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	} else {
		enc = zapcore.NewJSONEncoder(ec)
	}
	// The core lets every level through; the registry filters by each
	// logger's level, which BROKER_LOGGER resources change at run time.
	return logging.New(zapcore.NewCore(enc, w, zapcore.DebugLevel), lvl).Logger(zap.ErrorOutput(w)), nil
}

func serveCmd(l loaded, _, stderr io.Writer) error {
	if len(l.args) > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %v", l.args)}
	}
	log, err := newLogger(l.cfg.LogLevel, l.cfg.LogFormat, zapcore.Lock(zapcore.AddSync(stderr)))
	if err != nil {
		return usageError{err}
	}
	defer log.Sync()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, l, log); err != nil {
		log.Error("exit", zap.Error(err))
		return err
	}
	return nil
}

// serve runs the gateway until ctx ends.
func serve(ctx context.Context, l loaded, log *zap.Logger) error {
	for _, k := range l.unknownEnv {
		log.Warn("unknown-environment-variable-ignored", zap.String("name", k))
	}
	// Registered before "ready" is logged: from then on SIGHUP reloads.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	explicit := l.sources["metrics.addr"] != "default"
	g, err := startGateway(l.cfg, explicit, log)
	if err != nil {
		return err
	}
	fields := []zap.Field{zap.Stringer("addr", g.Addr()), zap.String("data-dir", l.cfg.DataDir)}
	if l.cfg.Listeners != "" {
		addrs := map[string]string{}
		for name, a := range g.ListenerAddrs() {
			addrs[name] = a.String()
		}
		fields = append(fields, zap.Any("listeners", addrs))
	}
	if a := g.MetricsAddr(); a != nil {
		fields = append(fields, zap.Stringer("metrics-addr", a))
	}
	log.Info("ready", fields...)
	var serveErr error
wait:
	for {
		select {
		case <-hup: // TLS handshake timeouts and certificate reloads: new certificates for new connections
			if err := g.ReloadTLS(); err != nil {
				log.Warn("tls-reload-failed", zap.Error(err))
			} else {
				log.Info("tls-reloaded", zap.Int("listeners", len(g.tls)))
			}
		case <-ctx.Done():
			log.Info("shutting-down")
			break wait
		case serveErr = <-g.served:
			break wait
		}
	}
	if err := errors.Join(g.Close(), serveErr); err != nil {
		return err
	}
	log.Info("stopped-serving")
	return nil
}
