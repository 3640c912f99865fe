package config

import "time"

// Observer receives per-request events (metrics.Metrics implements it). It
// is an interface so that kafka/ does not depend on the metrics library.
// Calls come from handler and writer goroutines concurrently.
type Observer interface {
	// Request reports one handled request: API key name, request frame
	// size and how long it took, long-poll waits excluded.
	Request(api string, reqBytes int, took time.Duration)
	// Response reports one response frame written.
	Response(api string, n int)
	// ProduceBytes and FetchBytes report record batch bytes per topic.
	ProduceBytes(topic string, n int)
	FetchBytes(topic string, n int)
}
