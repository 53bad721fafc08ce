package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// principal is the caller a request's verified token names; false when
// the request carries none (stdio, a static bearer token).
func principal(info *auth.TokenInfo) (fleet.Principal, bool) {
	if info == nil {
		return fleet.Principal{}, false
	}
	return fleet.Principal{Subject: info.UserID, Scopes: info.Scopes}, true
}

// caller returns ctx carrying the request's principal, for the fleet's
// scopes, the host's ScopeFunc and the audit, and whether it may call the
// tool name: whether it holds every scope Options.ToolScopes names for it.
func (g *Gateway) caller(ctx context.Context, extra *mcp.RequestExtra, name string) (context.Context, bool) {
	var info *auth.TokenInfo
	if extra != nil {
		info = extra.TokenInfo
	}
	if p, ok := principal(info); ok {
		ctx = fleet.WithPrincipal(ctx, p)
	}
	return ctx, fleet.GrantedIn(ctx, g.toolScopes[name])
}

// visible reports whether the caller of info may see the tool name.
func (g *Gateway) visible(info *auth.TokenInfo, name string) bool {
	if p, ok := principal(info); ok {
		return fleet.Granted(&p, g.toolScopes[name])
	}
	return fleet.Granted(nil, g.toolScopes[name])
}

// filterList is a receiving middleware that leaves out of each tools/list
// answer the tools its caller may not see (a page may then hold fewer
// tools than the page size; its cursor is go-sdk's, unchanged), and
// answers a tools/call of such a tool exactly as go-sdk answers one of a
// tool that does not exist, so a caller learns nothing of a tool its
// scopes hide; the refusal is audited (mcp_scope_denied, the caller's
// subject) and nothing runs.
func (g *Gateway) filterList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && call.Params != nil {
			var info *auth.TokenInfo
			if call.Extra != nil {
				info = call.Extra.TokenInfo
			}
			if name := call.Params.Name; !g.visible(info, name) {
				if p, ok := principal(info); ok {
					ctx = fleet.WithPrincipal(ctx, p)
				}
				g.refuse(ctx, name, "", purramcp.CodeScopeDenied)
				return nil, unknownTool(name)
			}
		}
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		var info *auth.TokenInfo
		if extra := req.GetExtra(); extra != nil {
			info = extra.TokenInfo
		}
		shown := make([]*mcp.Tool, 0, len(list.Tools))
		for _, tool := range list.Tools {
			if g.visible(info, tool.Name) {
				shown = append(shown, tool)
			}
		}
		out := *list
		out.Tools = shown
		return &out, nil
	}
}

// unknownTool is go-sdk's answer to a tools/call of a name it does not
// serve (TestHTTP_OAuthPerUserTools compares the two).
func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}
