package hostcore_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/internal/hostcore"
)

// blocking returns a definition whose Run counts the calls in flight and
// their peak, and waits for release.
type blocking struct {
	inflight, peak, runs atomic.Int32
	release              chan struct{}
}

func (b *blocking) def(name string, safe bool) purramcp.ToolDefinition {
	return purramcp.ToolDefinition{Name: name, ConcurrencySafe: safe, InputSchema: map[string]any{"type": "object"},
		Run: func(ctx context.Context, _ json.RawMessage, _ purramcp.ToolContext) (purramcp.ToolResult, error) {
			b.runs.Add(1)
			n := b.inflight.Add(1)
			for {
				p := b.peak.Load()
				if n <= p || b.peak.CompareAndSwap(p, n) {
					break
				}
			}
			defer b.inflight.Add(-1)
			select {
			case <-b.release:
				return purramcp.ToolResult{Content: purramcp.Envelope{Text: []string{}}}, nil
			case <-ctx.Done():
				return purramcp.ToolResult{}, purramcp.ErrCanceled
			}
		}}
}

// mutable is a Source whose registrations the test replaces.
type mutable struct {
	mu   sync.Mutex
	defs []purramcp.ToolDefinition
}

func (m *mutable) Registrations() []purramcp.ToolDefinition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]purramcp.ToolDefinition(nil), m.defs...)
}

func (m *mutable) set(defs ...purramcp.ToolDefinition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.defs = defs
}

// The gate's scope is the adapter value: a call of a registration read
// before the source changed still excludes a call of the same name read
// after it, and a ConcurrencySafe registration takes no gate.
func TestGates_ScopeSpansReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &blocking{release: make(chan struct{})}
		src := &mutable{}
		src.set(b.def("serial", false))
		set, err := hostcore.NewSet(src, hostcore.Rules{Package: "test"})
		require.NoError(t, err)
		first := set.Current()
		src.set(b.def("serial", false)) // a new registration of the same name
		second, err := set.Read()
		require.NoError(t, err)
		var wg sync.WaitGroup
		for _, l := range []*hostcore.List{first, second, first, second} {
			def, ok := l.Lookup("serial")
			require.True(t, ok)
			wg.Go(func() {
				out, err := hostcore.Call(t.Context(), set.Gates(), hostcore.Hooks{}, def, "", nil)
				assert.NoError(t, err)
				assert.Equal(t, "", out.Code())
			})
		}
		synctest.Wait()
		assert.Equal(t, int32(1), b.inflight.Load(), "calls of one name in flight across two reads")
		close(b.release)
		wg.Wait()
		assert.Equal(t, int32(1), b.peak.Load())
		assert.Equal(t, int32(4), b.runs.Load())
	})
}

func TestGates_ConcurrencySafeTakesNoGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &blocking{release: make(chan struct{})}
		var g hostcore.Gates
		def := b.def("parallel", true)
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				_, err := hostcore.Call(t.Context(), &g, hostcore.Hooks{}, def, "", nil)
				assert.NoError(t, err)
			})
		}
		synctest.Wait()
		assert.Equal(t, int32(3), b.inflight.Load())
		close(b.release)
		wg.Wait()
	})
}

// A call waiting for its turn ends with ErrCanceled when its ctx ends, and
// never runs.
func TestGates_CanceledWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &blocking{release: make(chan struct{})}
		var g hostcore.Gates
		def := b.def("serial", false)
		done := make(chan error)
		go func() {
			_, err := hostcore.Call(t.Context(), &g, hostcore.Hooks{}, def, "", nil)
			done <- err
		}()
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		waiting := make(chan error)
		go func() {
			out, err := hostcore.Call(ctx, &g, hostcore.Hooks{}, def, "", nil)
			assert.Equal(t, hostcore.Outcome{}, out)
			waiting <- err
		}()
		synctest.Wait()
		cancel()
		err := <-waiting
		assert.ErrorIs(t, err, purramcp.ErrCanceled)
		assert.ErrorIs(t, err, context.Canceled)
		close(b.release)
		require.NoError(t, <-done)
		assert.Equal(t, int32(1), b.runs.Load(), "the canceled call ran")
	})
}

// A free gate is taken even when ctx has already ended: Run decides, as it
// does for a ConcurrencySafe registration.
func TestGates_FreeGateWithEndedContext(t *testing.T) {
	var g hostcore.Gates
	ran := 0
	def := purramcp.ToolDefinition{Name: "serial",
		Run: func(context.Context, json.RawMessage, purramcp.ToolContext) (purramcp.ToolResult, error) {
			ran++
			return purramcp.ToolResult{ErrorCode: purramcp.CodeInvalidArguments}, nil
		}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for range 20 {
		out, err := hostcore.Call(ctx, &g, hostcore.Hooks{}, def, "", nil)
		require.NoError(t, err)
		assert.Equal(t, purramcp.CodeInvalidArguments, out.Code())
	}
	assert.Equal(t, 20, ran)
}
