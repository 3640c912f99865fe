package main

// Kafka's listener settings: listeners, advertised.listeners,
// listener.security.protocol.map and per-listener overrides
// (listener.name.<name>.<setting>), mapped onto kafka.Listener. listen and
// advertised.addr stay a shorthand for one PLAINTEXT listener.

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/kgateway/kgateway/auth"
	"github.com/kgateway/kgateway/kafka"
	"go.uber.org/zap"
)

// perListenerKeys are the settings a listener.name.<name>. prefix may
// override.
var perListenerKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.truststore.type", "ssl.truststore.location",
	"ssl.client.auth", "ssl.enabled.protocols", "ssl.principal.mapping.rules", "sasl.enabled.mechanisms",
}

// listenerEntry is one NAME://host:port of listeners or
// advertised.listeners.
type listenerEntry struct{ name, addr string }

// parseListenerList parses "NAME://host:port,..." (prop names the setting
// in errors).
func parseListenerList(prop, s string) ([]listenerEntry, error) {
	var out []listenerEntry
	for _, item := range splitList(s) {
		name, addr, ok := strings.Cut(item, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: %q is not NAME://host:port", prop, item)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%s: %q: %v", prop, item, err)
		}
		if slices.ContainsFunc(out, func(e listenerEntry) bool { return e.name == name }) {
			return nil, fmt.Errorf("%s: listener %s named twice", prop, name)
		}
		out = append(out, listenerEntry{name, addr})
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// protocolMap parses listener.security.protocol.map.
func protocolMap(s string) (map[string]kafka.SecurityProtocol, error) {
	m := map[string]kafka.SecurityProtocol{}
	for _, item := range splitList(s) {
		name, proto, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("listener.security.protocol.map: %q is not NAME:PROTOCOL", item)
		}
		p, err := kafka.ParseSecurityProtocol(strings.TrimSpace(proto))
		if err != nil {
			return nil, fmt.Errorf("listener.security.protocol.map: %w", err)
		}
		m[strings.TrimSpace(name)] = p
	}
	return m, nil
}

// listenerSpec is one listener as configured, before its TLS files are
// read.
type listenerSpec struct {
	kafka.Listener
	setting func(key string) string // the listener's value of an ssl.*/sasl.* key
}

// listenerSpecs resolves the listener settings; nil when listeners is
// unset (the listen shorthand applies).
func (c Config) listenerSpecs() ([]listenerSpec, error) {
	if c.Listeners == "" {
		if c.AdvertisedListeners != "" {
			return nil, errors.New("advertised.listeners is set without listeners (with listen, use advertised.addr)")
		}
		return nil, nil
	}
	ls, err := parseListenerList("listeners", c.Listeners)
	if err != nil {
		return nil, err
	}
	adv, err := parseListenerList("advertised.listeners", c.AdvertisedListeners)
	if err != nil {
		return nil, err
	}
	protos, err := protocolMap(c.ListenerProtocolMap)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range adv {
		if !slices.ContainsFunc(ls, func(e listenerEntry) bool { return e.name == a.name }) {
			errs = append(errs, fmt.Errorf("advertised.listeners: %s is not in listeners", a.name))
		}
	}
	var out []listenerSpec
	for _, e := range ls {
		proto, ok := protos[e.name]
		if !ok {
			errs = append(errs, fmt.Errorf("listeners: %s has no protocol in listener.security.protocol.map", e.name))
			continue
		}
		sp := listenerSpec{Listener: kafka.Listener{Name: e.name, Protocol: proto, Addr: e.addr}}
		if i := slices.IndexFunc(adv, func(a listenerEntry) bool { return a.name == e.name }); i >= 0 {
			sp.Advertised = adv[i].addr
		}
		sp.setting = c.listenerSetting(e.name)
		out = append(out, sp)
	}
	return out, errors.Join(errs...)
}

// listenerSetting returns a lookup of the listener's value of a key: its
// listener.name.<name>.<key> override, else the server-wide setting.
func (c Config) listenerSetting(name string) func(string) string {
	prefix := "listener.name." + strings.ToLower(name) + "."
	return func(key string) string {
		if v, ok := c.listenerProps[prefix+key]; ok {
			return v
		}
		f, _ := fieldByProp(key)
		return c.get(f)
	}
}

// tlsOptions are a listener's ssl.* settings.
func tlsOptions(get func(string) string) auth.TLSOptions {
	return auth.TLSOptions{
		KeystoreType: get("ssl.keystore.type"), KeystoreLocation: get("ssl.keystore.location"),
		TruststoreType: get("ssl.truststore.type"), TruststoreLocation: get("ssl.truststore.location"),
		ClientAuth: get("ssl.client.auth"), EnabledProtocols: splitList(get("ssl.enabled.protocols")),
	}
}

// validateListeners checks the listener settings without reading files.
func (c Config) validateListeners() error {
	specs, err := c.listenerSpecs()
	if err != nil {
		return err
	}
	var errs []error
	for _, sp := range specs {
		if _, err := auth.NewPrincipalMapper(sp.setting("ssl.principal.mapping.rules")); err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", sp.Name, err))
		}
		if sp.Protocol.UsesTLS() && sp.setting("ssl.keystore.location") == "" {
			errs = append(errs, fmt.Errorf("listener %s: %s needs ssl.keystore.location", sp.Name, sp.Protocol))
		}
		if sp.Protocol.UsesSASL() {
			if err := auth.CheckMechanisms(splitList(sp.setting("sasl.enabled.mechanisms"))); err != nil {
				errs = append(errs, fmt.Errorf("listener %s: sasl.enabled.mechanisms: %w", sp.Name, err))
			}
		}
	}
	for k := range c.listenerProps {
		if !validListenerProp(k) {
			errs = append(errs, fmt.Errorf("unknown property %q (a listener.name.<name>. prefix takes %s)", k, strings.Join(perListenerKeys, ", ")))
		}
	}
	return errors.Join(errs...)
}

func validListenerProp(k string) bool {
	rest, ok := strings.CutPrefix(k, "listener.name.")
	if !ok {
		return false
	}
	_, key, ok := strings.Cut(rest, ".")
	return ok && slices.Contains(perListenerKeys, key)
}

// buildListeners reads each listener's TLS files and returns the
// listeners, and the TLS configurations to reload on SIGHUP (TLS handshake timeouts and certificate reloads).
func (c Config) buildListeners(log *zap.Logger) ([]kafka.Listener, []*auth.TLS, error) {
	specs, err := c.listenerSpecs()
	if err != nil {
		return nil, nil, err
	}
	var out []kafka.Listener
	var reloadable []*auth.TLS
	for _, sp := range specs {
		l := sp.Listener
		if l.Protocol.UsesTLS() {
			name := l.Name
			t, err := auth.NewTLS(tlsOptions(sp.setting), func(err error) {
				log.Warn("tls-reload-failed", zap.String("listener", name), zap.Error(err))
			})
			if err != nil {
				return nil, nil, fmt.Errorf("listener %s: %w", l.Name, err)
			}
			l.TLS, reloadable = t.Config(), append(reloadable, t)
		}
		if l.PrincipalMapper, err = auth.NewPrincipalMapper(sp.setting("ssl.principal.mapping.rules")); err != nil {
			return nil, nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
		l.Mechanisms = splitList(sp.setting("sasl.enabled.mechanisms"))
		out = append(out, l)
	}
	return out, reloadable, nil
}
