package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// Codes the gateway answers with besides the mcp_* codes of a Run.
const (
	// CodeBusy is a call refused because the queue of calls waiting for a
	// slot was full (see [Options].MaxQueue); nothing was sent upstream.
	CodeBusy = "gateway_busy"
	// CodeWaitExpired is a call refused because it waited for a slot
	// longer than [Options].MaxWait; nothing was sent upstream.
	CodeWaitExpired = "gateway_wait_expired"
	// CodeUnknownTool is a tools/call of a name the gateway does not serve
	// (never listed, or withdrawn: its upstream unapproved, unauthorized or
	// gone), which go-sdk answers with a JSON-RPC error; its audit line
	// names no tool, as the name is the client's text.
	CodeUnknownTool = "gateway_unknown_tool"
	// CodeCanceled is a call whose downstream request ended first.
	CodeCanceled = purramcp.EventCodeCanceled
)

// handle serves one tools/call: the registration listed under the name runs
// the call, and its outcome becomes the downstream result (see result).
// Over HTTP the call was admitted before its request reached the session
// (see admitHTTP) and takes that slot; otherwise it is admitted here.
func (g *Gateway) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	release := g.tickets.take(req.Extra)
	if release != nil {
		defer release()
	}
	ctx, allowed := g.caller(ctx, req.Extra, name)
	if !allowed {
		g.refuse(ctx, name, "", purramcp.CodeScopeDenied)
		return failure(purramcp.CodeScopeDenied), nil
	}
	tool, ok := (*g.defs.Load())[name]
	if !ok {
		// go-sdk routed a name Refresh has just withdrawn.
		g.refuse(ctx, name, "", purramcp.CodeCatalogStale)
		return failure(purramcp.CodeCatalogStale), nil
	}
	if release == nil {
		var code string
		release, code = g.admission.acquire(ctx, callKey(req, tool.upstream))
		if code != "" {
			g.refuse(ctx, name, tool.upstream, code)
			return failure(code), nil
		}
		defer release()
	}
	if token := req.Params.GetProgressToken(); token != nil {
		var stop func()
		ctx, stop = forwardProgress(ctx, req.Session, token)
		defer stop() // before the result is sent
	}
	res, err := tool.def.Run(ctx, req.Params.Arguments, purramcp.ToolContext{ToolName: name})
	if err != nil {
		return failure(purramcp.OutcomeCode(res, err)), nil
	}
	return result(res), nil
}

// admitKeyOf is the admission key of a call on upstream by the user info's
// token names (none when nil) in the session named id; when id is "" the
// call's session is self (nil when it has none). The user is part of a
// named session's key, so a request naming another user's session counts
// against a session of its own.
func admitKeyOf(info *auth.TokenInfo, id string, self any, upstream string) admitKey {
	k := admitKey{session: self, upstream: upstream}
	if p, ok := principal(info); ok {
		k.user = p.Subject
	}
	if id != "" {
		k.session = "session\x00" + k.user + "\x00" + id
	}
	return k
}

// callKey is the admission key of a call admitted inside its session.
func callKey(req *mcp.CallToolRequest, upstream string) admitKey {
	var info *auth.TokenInfo
	if req.Extra != nil {
		info = req.Extra.TokenInfo
	}
	var id string
	var self any
	if req.Session != nil {
		id, self = req.Session.ID(), req.Session
	}
	return admitKeyOf(info, id, self, upstream)
}

// auditUnknown is a receiving middleware that audits a tools/call go-sdk
// refuses before the gateway's handler (a name not served) as a refused
// call, so every answer a client receives to a call is one audit line.
func (g *Gateway) auditUnknown(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil || method != "tools/call" {
			return res, err
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			if _, served := (*g.defs.Load())[p.Name]; served {
				return res, err // not a name go-sdk refused
			}
		}
		ctx, _ = g.caller(ctx, req.GetExtra(), "")
		g.refuse(ctx, "", "", CodeUnknownTool)
		return res, err
	}
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

// refuse reports a call the gateway refused before any Run; upstream is
// the ID of the upstream it was for, "" when none was chosen.
func (g *Gateway) refuse(ctx context.Context, name, upstream, code string) {
	if g.observer != nil {
		g.observer(ctx, purramcp.Event{Kind: purramcp.EventCall, ServerID: upstream, LocalName: name, Code: code})
	}
}
