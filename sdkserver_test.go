package purramcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/purramcptest"
)

// The go-sdk server the tests drive: a purramcptest.Server whose fixture
// tools answer as a test scripts them.

// sdkServer is a purramcptest.Server whose tools (fixture JSON) answer every
// tools/call with result (nil: an empty result with {"count":1}), or by
// calling handler when it is set.
type sdkServer struct {
	*purramcptest.Server

	mu      sync.Mutex // guards the fields below
	result  json.RawMessage
	handler func(ctx context.Context) (*mcp.CallToolResult, error)
}

// newSDKServer serves tools (fixture JSON); every tools/call answers result.
func newSDKServer(t testing.TB, result json.RawMessage, tools ...json.RawMessage) *sdkServer {
	t.Helper()
	return newSDKServerVersions(t, nil, result, tools...)
}

// newSDKServerVersions is newSDKServer negotiating only versions (nil: all
// of go-sdk's).
func newSDKServerVersions(t testing.TB, versions []string, result json.RawMessage, tools ...json.RawMessage) *sdkServer {
	t.Helper()
	return newSDKServerOptions(t, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{
		Tools: &mcp.ToolCapabilities{ListChanged: true}}, SupportedProtocolVersions: versions}, result, tools...)
}

// newSDKServerOptions is newSDKServer with the server's options.
func newSDKServerOptions(t testing.TB, opts *mcp.ServerOptions, result json.RawMessage, tools ...json.RawMessage) *sdkServer {
	t.Helper()
	s := &sdkServer{result: result}
	defs := make([]purramcptest.Tool, len(tools))
	for i, raw := range tools {
		defs[i] = purramcptest.Tool{Tool: sdkTool(t, raw), Handler: s.call}
	}
	s.Server = purramcptest.NewServer(purramcptest.Options{Server: opts}, defs...)
	return s
}

func (s *sdkServer) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	result, handler := s.result, s.handler
	s.mu.Unlock()
	if handler != nil {
		return handler(ctx)
	}
	if result == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 1}}, nil
	}
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(result, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *sdkServer) counts() (lists, calls int) { return s.Lists(), s.Calls() }

func (s *sdkServer) lastArguments() json.RawMessage {
	args := s.Arguments()
	if len(args) == 0 {
		return nil
	}
	return args[len(args)-1]
}
