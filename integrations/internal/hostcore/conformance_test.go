package hostcore_test

import (
	"context"
	"encoding/json"
	"testing"

	"purra.dev/purramcp/integrations/internal/hostcore"
	"purra.dev/purramcp/purramcptest"
)

// reference is the smallest adapter built the way the integrations are: a
// set over the source, dispatch by name, the shared call path.
type reference struct {
	set   *hostcore.Set
	hooks hostcore.Hooks
}

func (r *reference) Declared(context.Context) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, d := range r.set.Current().Defs() {
		b, err := json.Marshal(d.InputSchema)
		if err != nil {
			return nil, err
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			return nil, err
		}
		out[d.Name] = schema
	}
	return out, nil
}

func (r *reference) Invoke(ctx context.Context, callID, name string, args json.RawMessage) (string, error) {
	def, ok := r.set.Current().Lookup(name)
	if !ok {
		return hostcore.ErrorJSON(hostcore.CodeUnknownTool), nil
	}
	out, err := hostcore.Call(ctx, r.set.Gates(), r.hooks, def, callID, args)
	if err != nil {
		return "", err
	}
	return out.JSON(), nil
}

func (r *reference) Refresh() error {
	_, err := r.set.Read()
	return err
}

func TestConformance_Reference(t *testing.T) {
	purramcptest.Conformance(t, purramcptest.ConformanceOptions{UnknownTool: true},
		func(t *testing.T, src purramcptest.Source, hooks purramcptest.Hooks) purramcptest.Adapter {
			set, err := hostcore.NewSet(src, hostcore.Rules{Package: "reference"})
			if err != nil {
				t.Fatal(err)
			}
			return &reference{set: set, hooks: hostcore.Hooks{Call: hooks.Call, OnHostError: hooks.OnHostError}}
		})
}
