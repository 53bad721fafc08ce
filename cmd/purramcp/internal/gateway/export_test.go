package gateway

// AdmissionHeld reports what the gateway's admission holds: calls in
// flight, calls waiting, and the keys its maps and tickets keep.
func (g *Gateway) AdmissionHeld() (inFlight, waiting, keys int) {
	a := g.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	keys = len(a.users) + len(a.sessions) + len(a.upstreams) + len(a.classes) + len(a.ring)
	g.tickets.m.Range(func(any, any) bool { keys++; return true })
	return a.total, a.queued, keys
}
