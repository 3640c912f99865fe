//go:build !linux

package wire

import "net"

// SocketQueued is how many received bytes wait in nc's kernel buffer;
// unknown (0) here, so a frame's buffer grows by doubling.
func SocketQueued(net.Conn) int { return 0 }
