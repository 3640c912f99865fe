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
