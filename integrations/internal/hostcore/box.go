package hostcore

import (
	"context"
	"encoding/json"

	"purra.dev/purramcp"
)

// A Box is what an adapter that declares its tools and dispatches the
// model's calls by name serves (purraanthropic's and purraopenai's
// Toolbox): a [Set] read when the box is made and at each [Box.Refresh], and
// the host's [Hooks]. It is safe for concurrent use.
type Box struct {
	set   *Set
	hooks Hooks
}

// NewBox returns a box over src after a first read; it fails as [NewSet]
// does.
func NewBox(src Source, rules Rules, hooks Hooks) (*Box, error) {
	set, err := NewSet(src, rules)
	if err != nil {
		return nil, err
	}
	return &Box{set: set, hooks: hooks}, nil
}

// Refresh reads the source again; on an error the box keeps serving what it
// read before.
func (b *Box) Refresh() error {
	_, err := b.set.Read()
	return err
}

// Current returns the list read last.
func (b *Box) Current() *List { return b.set.Current() }

// Call runs def once, as [Call] does, with the box's gates and hooks.
func (b *Box) Call(ctx context.Context, def purramcp.ToolDefinition, callID string, args json.RawMessage) (Outcome, error) {
	return Call(ctx, b.set.Gates(), b.hooks, def, callID, args)
}

// Dispatch runs the definition named name in l (a list the box read) once,
// as [Box.Call] does; a name in no definition of l runs nothing and gives
// the Outcome whose code is [CodeUnknownTool].
func (b *Box) Dispatch(ctx context.Context, l *List, name, callID string, args json.RawMessage) (Outcome, error) {
	def, ok := l.Lookup(name)
	if !ok {
		return Outcome{UnknownTool: true}, nil
	}
	return b.Call(ctx, def, callID, args)
}

// Declare returns f of each definition of l, in the source's order, in a
// fresh slice: an adapter's declarations for the model.
func Declare[T any](l *List, f func(purramcp.ToolDefinition) T) []T {
	out := make([]T, len(l.defs))
	for i, d := range l.defs {
		out[i] = f(d)
	}
	return out
}
