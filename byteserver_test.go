package purramcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp"
)

// The byte server: a JSON-RPC peer over pipes that writes answers byte for
// byte, for answers a go-sdk server never sends.

// byteServer is a JSON-RPC peer over mcp.IOTransport pipes that writes
// every answer as the exact bytes a test gives it: frames go-sdk's own
// encoder would never write (twelve MiB of raw '<', hundreds of thousands of
// blocks or tools on one line). It answers the legacy initialize handshake,
// tools/list with page and tools/call with call; other requests get {}.
type byteServer struct {
	page string // the tools/list result
	call string // the tools/call result
	// beforeList is written, as is, before each tools/list answer.
	beforeList string

	toServer   *io.PipeWriter // the client's writes
	fromClient *io.PipeReader
	toClient   *io.PipeWriter
	done       chan struct{}

	mu    sync.Mutex
	lists int
	calls int
}

// start connects a bounded, attached session to the server; both close at
// cleanup.
func (s *byteServer) start(t testing.TB) sessionHarness {
	t.Helper()
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	s.toServer, s.fromClient, s.toClient, s.done = clientW, serverR, serverW, make(chan struct{})
	go s.serve()
	monitor := purramcp.NewCatalogMonitor()
	client := monitor.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), monitor.Transport(&mcp.IOTransport{Reader: clientR, Writer: clientW}),
		&mcp.ClientSessionOptions{ProtocolVersion: purramcp.ProtocolVersion20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = serverR.Close()
		_ = serverW.Close()
		<-s.done
	})
	if err := monitor.Attach(cs); err != nil {
		t.Fatalf("monitor.Attach(cs): %v", err)
	}
	return sessionHarness{session: cs, monitor: monitor, counts: s.counts, lastArguments: func() json.RawMessage { return nil }}
}

func (s *byteServer) serve() {
	defer close(s.done)
	lines := bufio.NewReaderSize(s.fromClient, 1<<20)
	for {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
			continue // notifications
		}
		result := `{}`
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bytes","version":"1"}}`
		case "tools/list":
			s.mu.Lock()
			s.lists++
			s.mu.Unlock()
			result = s.page
			if s.beforeList != "" {
				if _, err := s.toClient.Write([]byte(s.beforeList)); err != nil {
					return
				}
			}
		case "tools/call":
			s.mu.Lock()
			s.calls++
			s.mu.Unlock()
			result = s.call
		}
		frame := make([]byte, 0, len(result)+64)
		frame = append(frame, `{"jsonrpc":"2.0","id":`...)
		frame = append(frame, req.ID...)
		frame = append(frame, `,"result":`...)
		frame = append(frame, result...)
		frame = append(frame, "}\n"...)
		if _, err := s.toClient.Write(frame); err != nil {
			return
		}
	}
}

func (s *byteServer) counts() (lists, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.calls
}
