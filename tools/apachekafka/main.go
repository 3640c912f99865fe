// Command apachekafka runs an Apache Kafka broker (test/apachekafka) until
// it is interrupted, for benchmarks and for trying a client against the
// reference by hand:
//
//	go run ./tools/apachekafka [--fsync] [--dir DIR]
//
// KGW_KAFKA_PROPS, if set, is extra server.properties as comma-separated
// key=value pairs (e.g. group.initial.rebalance.delay.ms=0), so that a
// kgbench run (which passes its environment on) can give the broker the
// settings it gives kgateway through --kgateway-args.
//
// Once the broker serves it prints one line, "bootstrap ADDR pid PID"; on
// SIGINT or SIGTERM it shuts the broker down cleanly.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kgateway/kgateway/test/apachekafka"
)

func main() {
	fsync := flag.Bool("fsync", false, "log.flush.interval.messages=1: fsync every append")
	dir := flag.String("dir", "", "directory for the broker's log dir and output (default: a temporary one, removed at exit)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	props, err := envProps(os.Getenv("KGW_KAFKA_PROPS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b, err := apachekafka.Start(ctx, apachekafka.Options{Dir: *dir, Fsync: *fsync, Props: props})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("bootstrap %s pid %d\n", b.Addr, b.Pid())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	if err := b.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// envProps parses "k=v,k=v" (empty: none).
func envProps(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("KGW_KAFKA_PROPS: %q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
