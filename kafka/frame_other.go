//go:build !linux

package kafka

import "net"

// socketQueued is how many received bytes wait in nc's kernel buffer;
// unknown (0) here, so a frame's buffer grows by doubling.
func socketQueued(net.Conn) int { return 0 }
