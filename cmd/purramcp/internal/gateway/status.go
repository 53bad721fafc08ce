package gateway

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
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

// Status returns the gateway's status now: every upstream and tool.
func (g *Gateway) Status() Status {
	return g.status(func(string) bool { return true })
}

// statusFor is the status within the view of the caller of info: the
// tools it may see (as in tools/list), and the upstreams of which it may
// see a tool the configuration binds ([Upstream].Tools; all when unknown).
func (g *Gateway) statusFor(info *auth.TokenInfo) Status {
	return g.status(func(name string) bool { return g.visible(info, name) })
}

// status is the status of the tools visible says, and of the upstreams
// with a visible tool.
func (g *Gateway) status(visible func(name string) bool) Status {
	ups := g.src.Upstreams()
	st := Status{Upstreams: make([]UpstreamStatus, 0, len(ups)), Tools: slices.DeleteFunc(g.Tools(), func(name string) bool {
		return !visible(name)
	})}
	if st.Tools == nil {
		st.Tools = []string{}
	}
	for _, up := range ups {
		if up.Tools != nil && !slices.ContainsFunc(up.Tools, visible) {
			continue
		}
		st.Upstreams = append(st.Upstreams, UpstreamStatus{
			ID: up.ID, State: up.State, Digest: up.Digest, Code: up.Code,
			Attempts: up.Attempts, Since: up.Since.UTC(),
		})
	}
	slices.SortFunc(st.Upstreams, func(a, b UpstreamStatus) int { return strings.Compare(a.ID, b.ID) })
	return st
}
