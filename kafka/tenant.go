package kafka

// tenantOf is the principal whose per-principal bounds a request's growth
// counts against (docs/DESIGN.md "Bounds"): the connection's principal
// with an authorizer; "" without one, where there are no tenants (any
// client may delete any topic or group) and only the global bounds apply.
func tenantOf(rc *reqCtx) string {
	if rc.conn.s.cfg.Authorizer == nil {
		return ""
	}
	return rc.conn.Principal()
}
