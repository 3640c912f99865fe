package etcdmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrClosed: AddPin after Close.
var ErrClosed = errors.New("etcdmeta: closed")

// pinLease is the lease this handle's pins are attached to, kept alive
// until stop; done closes when the keep-alive ends (stopped, or the lease
// expired or was revoked).
type pinLease struct {
	id   clientv3.LeaseID
	done chan struct{}
	stop context.CancelFunc
}

func (m *EtcdMeta) pinKey(key, id string) string {
	return m.opts.Prefix + "p/" + key + "\x00" + id
}

// AddPin stores p under the pin lease before it returns. A lease that
// ended (etcd unreachable for its TTL, or revoked) is replaced once.
func (m *EtcdMeta) AddPin(p tier.Pin) error {
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		l, err := m.pinLease()
		if err != nil {
			return err
		}
		ctx, cancel := m.ctx()
		_, err = m.c.Put(ctx, m.pinKey(p.Key, p.ID), string(v), clientv3.WithLease(l.id))
		cancel()
		if errors.Is(err, rpctypes.ErrLeaseNotFound) && attempt == 0 {
			m.dropLease(l)
			continue
		}
		if err != nil {
			return fmt.Errorf("etcdmeta: pin %s: %w", p.Key, err)
		}
		return nil
	}
}

// pinLease returns the live pin lease, granting one if there is none.
func (m *EtcdMeta) pinLease() (*pinLease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if l := m.lease; l != nil {
		select {
		case <-l.done:
			l.stop()
			m.lease = nil
		default:
			return l, nil
		}
	}
	ctx, cancel := m.ctx()
	defer cancel()
	g, err := m.c.Grant(ctx, m.opts.PinLeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("etcdmeta: pin lease: %w", err)
	}
	kctx, stop := context.WithCancel(context.Background())
	ch, err := m.c.KeepAlive(kctx, g.ID)
	if err != nil {
		stop()
		return nil, fmt.Errorf("etcdmeta: pin lease keep-alive: %w", err)
	}
	l := &pinLease{id: g.ID, done: make(chan struct{}), stop: stop}
	go func() {
		for range ch {
		}
		close(l.done)
	}()
	m.lease = l
	return l, nil
}

func (m *EtcdMeta) dropLease(l *pinLease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == l {
		m.lease = nil
	}
	l.stop()
}

// RemovePin removes one pin (none: no error).
func (m *EtcdMeta) RemovePin(key, id string) error {
	ctx, cancel := m.ctx()
	defer cancel()
	if _, err := m.c.Delete(ctx, m.pinKey(key, id)); err != nil {
		return fmt.Errorf("etcdmeta: unpin %s: %w", key, err)
	}
	return nil
}

// Pins returns the object's pins, expired ones included until reaped.
func (m *EtcdMeta) Pins(key string) ([]tier.Pin, error) { return m.pins(m.pinKey(key, "")) }

// AllPins returns every pin.
func (m *EtcdMeta) AllPins() ([]tier.Pin, error) { return m.pins(m.opts.Prefix + "p/") }

func (m *EtcdMeta) pins(prefix string) ([]tier.Pin, error) {
	var out []tier.Pin
	err := m.scan(prefix, func(v []byte, _ int64) error {
		var p tier.Pin
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("%w: pin record: %w", storage.ErrCorrupt, err)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// Close revokes the pin lease, so this handle's pins go at once, and
// refuses further pins. The client stays open.
func (m *EtcdMeta) Close() error {
	m.mu.Lock()
	m.closed = true
	l := m.lease
	m.lease = nil
	m.mu.Unlock()
	if l == nil {
		return nil
	}
	l.stop()
	ctx, cancel := m.ctx()
	defer cancel()
	if _, err := m.c.Revoke(ctx, l.id); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("etcdmeta: revoke pin lease: %w", err)
	}
	return nil
}
