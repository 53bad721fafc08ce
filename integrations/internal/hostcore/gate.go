package hostcore

import (
	"context"
	"sync"

	"purra.dev/purramcp"
)

// Gates keep every registration that is not ConcurrencySafe from running
// concurrently with itself. The zero value is ready to use.
//
// The scope, the same in every integration: one adapter value (an ADK or
// Eino Toolset, an Anthropic or OpenAI Toolbox) owns one Gates for its whole
// lifetime, and a Gates holds one gate per local name. A call of a
// registration whose ConcurrencySafe is false holds its name's gate from
// just before Run until Run returns. So two such calls of one name never
// overlap on one adapter value, whichever read of the source each came
// from: a call of a registration read before a swap, a refresh or a fleet
// recovery still excludes a call of the same name read after it, and the
// tool lists an adapter hands out at different times share the gates. A call
// of a ConcurrencySafe registration takes no gate. Two adapter values share
// nothing: a host that needs exclusion across loops serves them from one
// adapter value.
//
// A Gates holds one channel per local name ever called, names the host
// chose in its bindings.
type Gates struct {
	mu     sync.Mutex // guards byName
	byName map[string]chan struct{}
}

// enter takes the gate of def's name when def is not ConcurrencySafe and
// returns the function that gives it back. A free gate is taken at once,
// whatever ctx's state (Run then decides, as for a ConcurrencySafe tool);
// while another call holds it, enter waits until it is free or ctx ends
// ([purramcp.ErrCanceled], and the call never runs).
func (g *Gates) enter(ctx context.Context, def purramcp.ToolDefinition) (release func(), err error) {
	if def.ConcurrencySafe {
		return func() {}, nil
	}
	gate := g.gate(def.Name)
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	default:
	}
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	case <-ctx.Done():
		return nil, purramcp.ErrCanceled
	}
}

// gate returns the gate of name, made on first use.
func (g *Gates) gate(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byName == nil {
		g.byName = make(map[string]chan struct{})
	}
	gate, ok := g.byName[name]
	if !ok {
		gate = make(chan struct{}, 1)
		g.byName[name] = gate
	}
	return gate
}
