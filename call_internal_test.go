package purramcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"purra.dev/purramcp/internal/bounding"
	"purra.dev/purramcp/internal/testvalues"
)

// TestRun_ParseArgumentsAsMarshal: Run's parseArguments gives the same wire
// bytes and value as the path it replaced (Parse then json.Marshal), for
// texts in any spelling (escapes, number forms, member order, array-index
// names).
func TestRun_ParseArgumentsAsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2))

	contract, err := NewContract(ContractOptions{SchemaID: "s", SchemaVersion: "1",
		Schema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{`{}`, ` { "b" : 1 , "a" : [ 1e2 , -0 , 0.5e-7 , 1E21 ] } `,
		`{"\u003c\u2028":"\ud83d\ude00\n\u0000","10":1,"2":2,"x":{"z":null,"y":true}}`,
		`{"s":"<>&\"\\\/\b\f\r\t\u001f\u007f"}`, `{"n":123456789012345678901234567890,"m":-1.0e-400}`}
	for range 3000 {
		raw, err := json.Marshal(testvalues.Wire(r, 4))
		if err == nil && bytes.HasPrefix(raw, []byte("{")) {
			texts = append(texts, string(raw), strings.ReplaceAll(string(raw), ",", " , "))
		}
	}
	for _, text := range texts {
		want, wantErr := contract.Parse(text)
		gotValue, gotWire, gotErr := parseArguments(contract, text)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s: parseArguments %v, Parse %v", text, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		wantWire, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(gotValue)
		if !bytes.Equal(gotWire, wantWire) || !bytes.Equal(again, wantWire) {
			t.Fatalf("%s:\n got %s\nwant %s", text, gotWire, wantWire)
		}
	}
}

// boundedSession connects server in memory through a fresh monitor's
// Connect (the bounding layer, attached); both ends close at t's cleanup.
func boundedSession(t *testing.T, server *mcp.Server) (*CatalogMonitor, *mcp.ClientSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewCatalogMonitor()
	cs, err := m.Connect(t.Context(), m.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return m, cs
}

// TestBounded_InlineConcurrentCancels: many Runs at once on one bounded
// in-memory session, each on its caller's goroutine, with callers that give
// up at random moments (before, during and after the request). Every Run
// returns a result or ErrCanceled within its Timeout, none severs the
// healthy session, later Runs still succeed, and no goroutine is left.
func TestBounded_InlineConcurrentCancels(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // after the session's own cleanup
	ctx := t.Context()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	m, cs := boundedSession(t, server)
	if !m.bounding.Inline() {
		t.Fatal("the bounded in-memory session does not run requests inline")
	}
	const timeout = 2 * time.Second
	catalog, err := DiscoverTools(ctx, cs, "s", map[string]ToolBinding{"echo": {LocalName: "echo",
		Policy: ToolPolicy{Mode: "read", Title: "Echo"}, Scope: Unscoped}}, DiscoveryOptions{Monitor: m, Limits: Limits{Timeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	run := catalog.Registrations()[0].Run
	var wg sync.WaitGroup
	var canceled, answered atomic.Int32
	errs := make(chan error, 8*40)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				wait := timeout // every third caller waits; the others give up within 2.4 ms
				if i%3 != 0 {
					wait = time.Duration((g*40+i)%9) * 300 * time.Microsecond
				}
				callCtx, cancel := context.WithTimeout(ctx, wait)
				start := time.Now()
				res, err := run(callCtx, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), ToolContext{})
				took := time.Since(start)
				cancel()
				switch {
				case took > timeout:
					errs <- fmt.Errorf("Run took %v, over its Timeout", took)
				case errors.Is(err, ErrCanceled):
					canceled.Add(1)
				case err != nil || res.ErrorCode != "":
					errs <- fmt.Errorf("Run = %+v, %v", res, err)
				case len(res.Content.Text) != 1 || res.Content.Text[0] != fmt.Sprintf(`{"n":%d}`, i):
					errs <- fmt.Errorf("Run answered %v for n=%d", res.Content.Text, i)
				default:
					answered.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d Runs answered, %d canceled", answered.Load(), canceled.Load())
	if canceled.Load() == 0 || answered.Load() == 0 {
		t.Fatalf("the callers' deadlines did not mix outcomes: %d answered, %d canceled", answered.Load(), canceled.Load())
	}
	if catalog.Stale() {
		t.Fatal("a healthy session was severed")
	}
	res, err := run(ctx, json.RawMessage(`{"n":-1}`), ToolContext{})
	if err != nil || res.ErrorCode != "" {
		t.Fatalf("Run after the cancels = %+v, %v", res, err)
	}
}

// TestBounding_SharesTheAdaptersVocabulary: the codes the request path
// fails with and the largest limits its frame caps assume are the
// adapter's own.
func TestBounding_SharesTheAdaptersVocabulary(t *testing.T) {
	for engine, adapter := range map[string]string{
		bounding.CodeCatalogLimitExceeded: CodeCatalogLimitExceeded,
		bounding.CodeResultTooLarge:       CodeResultTooLarge,
		bounding.CodeTimeout:              CodeTimeout,
		bounding.CodeTransportError:       CodeTransportError,
		bounding.CodeProtocolError:        CodeProtocolError,
		bounding.CodeResultInvalid:        CodeResultInvalid,
		bounding.CodeUnauthorized:         CodeUnauthorized,
	} {
		if engine != adapter {
			t.Errorf("bounding's code %q, the adapter's %q", engine, adapter)
		}
	}
	if bounding.MaxCatalogBytes != defaultMaxCatalogBytes || bounding.MaxResultBytes != defaultMaxResultBytes {
		t.Errorf("bounding's largest limits %d and %d, the adapter's %d and %d",
			bounding.MaxCatalogBytes, bounding.MaxResultBytes, defaultMaxCatalogBytes, defaultMaxResultBytes)
	}
	if err := publicError(bounding.ErrCanceled); err != ErrCanceled {
		t.Errorf("publicError(bounding.ErrCanceled) = %v", err)
	}
	if err := publicError(&bounding.Failure{Code: bounding.CodeTimeout}); !errors.Is(err, ErrTimeout) {
		t.Errorf("publicError(timeout) = %v", err)
	}
	// A tools/list page over the layer's cap names the limit it passed.
	for items, field := range map[bool]string{false: "MaxCatalogBytes", true: "MaxTools"} {
		var d *DiscoveryError
		err := publicError(&bounding.Failure{Code: bounding.CodeCatalogLimitExceeded, Items: items})
		if want := (DiscoveryError{Code: CodeCatalogLimitExceeded, Path: "$", Keyword: field}); !errors.As(err, &d) || *d != want {
			t.Errorf("publicError(catalog limit, items %v): want the DiscoveryError naming %s", items, field)
		}
	}
}
