package purramcp

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionRecord: the record keeps the last maxUnattached sessions whose
// requests it saw, each once; once a session is attached it drops them and
// records nothing more, and every request still reaches the next handler.
func TestSessionRecord(t *testing.T) {
	var r sessionRecord
	var passed int
	send := r.middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		passed++
		return nil, nil
	})
	sessions := make([]*mcp.ClientSession, maxUnattached+1)
	for i := range sessions {
		sessions[i] = new(mcp.ClientSession)
		for range 2 { // a session's second request records nothing new
			if _, err := send(t.Context(), "initialize", &mcp.InitializeRequest{Session: sessions[i]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := send(t.Context(), "ping", nil); err != nil { // no request: passed on
		t.Fatal(err)
	}
	if r.has(sessions[0]) {
		t.Errorf("the oldest session is forgotten: got recorded, want not")
	}
	for i, cs := range sessions[1:] {
		if !r.has(cs) {
			t.Errorf("session %d: got not recorded, want recorded", i+1)
		}
	}
	r.attach()
	if r.has(sessions[4]) {
		t.Errorf("after attach: got a session recorded, want none")
	}
	if _, err := send(t.Context(), "tools/list", &mcp.ClientRequest[*mcp.ListToolsParams]{Session: sessions[0]}); err != nil {
		t.Fatal(err)
	}
	if r.has(sessions[0]) {
		t.Errorf("after attach: got a new session recorded, want none")
	}
	if want := 2*len(sessions) + 2; passed != want {
		t.Errorf("requests passed on: got %d, want %d", passed, want)
	}
}
