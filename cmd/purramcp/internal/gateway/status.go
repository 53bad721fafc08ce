package gateway

import (
	"slices"
	"strings"
	"time"
)

// A Status is what the gateway reports about itself: each upstream's state
// and the tools it lists. It carries no secrets and no upstream text (a
// child's stderr stays with the host).
type Status struct {
	// Upstreams are the source's servers, sorted by ID.
	Upstreams []UpstreamStatus `json:"upstreams"`
	// Tools are the names the gateway lists, sorted.
	Tools []string `json:"tools"`
}

// An UpstreamStatus is one upstream in a [Status].
type UpstreamStatus struct {
	// ID, State, Digest, Code, Attempts and Since are the [Upstream]'s;
	// Since is in UTC.
	ID       string    `json:"id"`
	State    string    `json:"state"`
	Digest   string    `json:"digest,omitempty"`
	Code     string    `json:"code,omitempty"`
	Attempts int       `json:"attempts"`
	Since    time.Time `json:"since"`
}

// Status returns the gateway's status now.
func (g *Gateway) Status() Status {
	ups := g.src.Upstreams()
	st := Status{Upstreams: make([]UpstreamStatus, len(ups)), Tools: g.Tools()}
	if st.Tools == nil {
		st.Tools = []string{}
	}
	for i, up := range ups {
		st.Upstreams[i] = UpstreamStatus{
			ID: up.ID, State: up.State, Digest: up.Digest, Code: up.Code,
			Attempts: up.Attempts, Since: up.Since.UTC(),
		}
	}
	slices.SortFunc(st.Upstreams, func(a, b UpstreamStatus) int { return strings.Compare(a.ID, b.ID) })
	return st
}
