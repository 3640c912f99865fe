// Package metrics exposes kgateway's Prometheus metrics, /healthz and
// /readyz on one HTTP listener (--metrics-addr).
//
// Invariants:
//
//   - **Registry per server.** Every server has its own
//     prometheus.Registry (never the global default), so a test process
//     can run several servers.
//   - **Nothing on the hot path.** Nothing here is on a hot path beyond
//     a counter or histogram update per request: state that can be read
//     from the layers (partitions, ledgers, disk bytes, consumer lag)
//     is computed at scrape time by a custom Collector, never
//     maintained incrementally.
//   - **No storage or protocol imports.** This package imports neither
//     pebble nor kmsg: kafka/ reports into it through the
//     kafka.Observer interface, and the scrape-time collector reads
//     through the Source functions package server wires in.
package metrics
