package wire

import (
	"net"
	"strconv"
)

// AdvertisedFor returns the host and port clients of nc should dial: the
// listener's advertised address, else the address nc was reached on (the per-listener advertised address).
func AdvertisedFor(nc net.Conn, addr string) (string, int32) {
	if addr == "" {
		addr = nc.LocalAddr().String()
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}

// HostOf is a remote address's IP (its string when it has none), as
// max.connections.per.ip counts it.
func HostOf(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}
