package cluster

import (
	"net"
	"sync"
	"testing"
)

// linkProxy forwards TCP connections to a target (each node reaches etcd
// through its own). Hold stops the bytes in both directions, keeping
// them, as a network that stalls does; Release lets them through.
type linkProxy struct {
	l      net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	held   bool
	closed bool
	conns  []net.Conn
}

func newLinkProxy(t testing.TB, target string) *linkProxy {
	t.Helper()
	return newLinkProxyOn(t, "127.0.0.1", target)
}

// newLinkProxyOn is a link proxy listening on host (an ephemeral port).
func newLinkProxyOn(t testing.TB, host, target string) *linkProxy {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &linkProxy{l: l, target: target}
	p.cond = sync.NewCond(&p.mu)
	go p.accept()
	return p
}

// URL is the proxy's address as an etcd endpoint.
func (p *linkProxy) URL() string { return "http://" + p.l.Addr().String() }

// Hold stops forwarding: bytes read are kept until Release.
func (p *linkProxy) Hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
}

// Release forwards again, the kept bytes first.
func (p *linkProxy) Release() {
	p.mu.Lock()
	p.held = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Close stops the proxy and every connection through it.
func (p *linkProxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	p.l.Close()
	for _, c := range conns {
		c.Close()
	}
}

func (p *linkProxy) accept() {
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close() // etcd is down (restarting): the client retries
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// pipe copies src to dst, waiting while the proxy is held; when either
// side ends, both are closed.
func (p *linkProxy) pipe(src, dst net.Conn) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.held && !p.closed {
				p.cond.Wait()
			}
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
