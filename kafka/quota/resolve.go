package quota

// Tags name the sensor a client's quota is measured on: the user and the
// client id of the level the quota was found at, "" for a type that level
// does not have (Kafka's quota metric tags).
type Tags struct {
	User, ClientID string
}

// Resolve finds the quota of key for the client (user, clientID) in
// Kafka's order: user+client-id, user+default client-id, user, default
// user+client-id, default user+default client-id, default user,
// client-id, default client-id. ok is false when no level sets the key:
// the client is unlimited.
func (q Quotas) Resolve(key, user, clientID string) (limit float64, tags Tags, ok bool) {
	if len(q) == 0 {
		return 0, Tags{}, false // no quotas: every request's fast path
	}
	u, du := Named(user), DefaultPart()
	c, dc := Named(clientID), DefaultPart()
	levels := []struct {
		e    Entity
		tags Tags
	}{
		{Entity{User: u, ClientID: c}, Tags{user, clientID}},
		{Entity{User: u, ClientID: dc}, Tags{user, clientID}},
		{Entity{User: u}, Tags{user, ""}},
		{Entity{User: du, ClientID: c}, Tags{user, clientID}},
		{Entity{User: du, ClientID: dc}, Tags{user, clientID}},
		{Entity{User: du}, Tags{user, ""}},
		{Entity{ClientID: c}, Tags{"", clientID}},
		{Entity{ClientID: dc}, Tags{"", clientID}},
	}
	for _, l := range levels {
		if v, found := q[l.e][key]; found {
			return v, l.tags, true
		}
	}
	return 0, Tags{}, false
}

// IPRate is the connection_creation_rate of ip: its own, else the default
// ip's (KIP-612); ok false: unlimited.
func (q Quotas) IPRate(ip string) (limit float64, ok bool) {
	if len(q) == 0 {
		return 0, false
	}
	if v, found := q[Entity{IP: Named(ip)}][ConnectionCreationRate]; found {
		return v, true
	}
	v, found := q[Entity{IP: DefaultPart()}][ConnectionCreationRate]
	return v, found
}
