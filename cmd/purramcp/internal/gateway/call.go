package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Codes the gateway answers with besides the mcp_* codes of a Run.
const (
	// CodeBusy is a call refused because its session or the gateway runs
	// as many calls as its cap allows; nothing was sent upstream.
	CodeBusy = "gateway_busy"
	// CodeCanceled is a call whose downstream request ended first.
	CodeCanceled = purramcp.EventCodeCanceled
)

// handle serves one tools/call: the registration listed under the name runs
// the call, and its outcome becomes the downstream result (see result).
func (g *Gateway) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	ctx, allowed := g.caller(ctx, req.Extra, name)
	if !allowed {
		g.refuse(ctx, name, purramcp.CodeScopeDenied)
		return failure(purramcp.CodeScopeDenied), nil
	}
	release, ok := g.calls.acquire(req.Session, g.maxSessionCalls, g.maxCalls)
	if !ok {
		g.refuse(ctx, name, CodeBusy)
		return failure(CodeBusy), nil
	}
	defer release()
	def, ok := (*g.defs.Load())[name]
	if !ok {
		// go-sdk routed a name Refresh has just withdrawn.
		g.refuse(ctx, name, purramcp.CodeCatalogStale)
		return failure(purramcp.CodeCatalogStale), nil
	}
	if token := req.Params.GetProgressToken(); token != nil {
		var stop func()
		ctx, stop = forwardProgress(ctx, req.Session, token)
		defer stop() // before the result is sent
	}
	res, err := def.Run(ctx, req.Params.Arguments, purramcp.ToolContext{ToolName: name})
	if err != nil {
		return failure(purramcp.OutcomeCode(res, err)), nil
	}
	return result(res), nil
}

// result turns a Run outcome into the downstream result: on success the
// validated text blocks and structured content, else isError with the code
// as the only text.
func result(res purramcp.ToolResult) *mcp.CallToolResult {
	if res.ErrorCode != "" {
		return failure(res.ErrorCode)
	}
	content := make([]mcp.Content, len(res.Content.Text))
	for i, text := range res.Content.Text {
		content[i] = &mcp.TextContent{Text: text}
	}
	out := &mcp.CallToolResult{Content: content}
	if res.Content.Structured != nil {
		out.StructuredContent = res.Content.Structured
	}
	return out
}

// failure is the downstream result of a failed call.
func failure(code string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: code}}}
}

// refuse reports a call the gateway refused before any Run.
func (g *Gateway) refuse(ctx context.Context, name, code string) {
	if g.observer != nil {
		g.observer(ctx, purramcp.Event{Kind: purramcp.EventCall, LocalName: name, Code: code})
	}
}

// A callLimiter counts the calls in flight, per session and in all.
type callLimiter struct {
	// mu guards sessions and total.
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]int // only sessions with calls in flight
	total    int
}

// acquire takes a slot for a call of session, or reports false when the
// session already runs perSession calls or the gateway total calls. The
// returned function gives the slot back; a session's entry goes once its
// last call ends, so closed sessions leave nothing behind.
func (l *callLimiter) acquire(session *mcp.ServerSession, perSession, total int) (func(), bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= total || l.sessions[session] >= perSession {
		return nil, false
	}
	l.total++
	l.sessions[session]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if l.sessions[session]--; l.sessions[session] == 0 {
			delete(l.sessions, session)
		}
	}, true
}
