package bounding

import (
	"encoding/json"
	"io"
	"math"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/jssize"
)

// The bounding layer under an mcp.IOTransport: the host's Reader is read
// through a frameFilter, which counts each incoming JSON value as it
// streams in, before go-sdk's decoder reads a byte of it. An answer over
// its request's cap is replaced by a rejection whatever it holds (invalid
// JSON, invalid UTF-8, NUL bytes included): over the cap first, as over
// HTTP, so that its request fails with the cap's code, never as a decoding
// failure that ends the session. Over go-sdk's in-memory and command
// transports the layer sees only decoded messages (layerConn.check).

// frameFilter is the Reader of a bounded IOTransport.
type frameFilter struct {
	src  io.ReadCloser
	conn atomic.Pointer[layerConn] // set once the connection is made

	lines lineReader
	scan  jssize.Scanner
	frame frameBuf // the current frame, while it may still be handed on
	over  bool     // the current frame passed every cap: not buffered
	begun bool     // the current frame has a byte other than whitespace
	// The request the current frame answers, once its id is known (looked):
	// its budget, whether it is pending and the frame's cap.
	looked, pending, decided bool
	budget                   *frameBudget
	limit                    int
	out                      frameBuf
	err                      error
}

// frameHead is the scanner's Path for io frames: it captures the top-level
// id and method and whether a result member came.
var frameHead = []string{"result"}

// layerIOTransport returns a copy of t whose Reader is filtered, and the
// filter, for the connection to own.
func layerIOTransport(t *mcp.IOTransport) (*mcp.IOTransport, *frameFilter) {
	f := &frameFilter{src: t.Reader}
	f.newFrame()
	c := *t
	c.Reader = f
	return &c, f
}

func (f *frameFilter) newFrame() {
	f.scan = jssize.Scanner{Path: frameHead, MaxItems: math.MaxInt}
	f.frame.Reset()
	f.over, f.begun = false, false
	f.looked, f.pending, f.decided, f.budget, f.limit = false, false, false, nil, maxFrameBytes
}

func (f *frameFilter) Close() error { return f.src.Close() }

func (f *frameFilter) Read(p []byte) (int, error) {
	for f.out.Len() == 0 && f.err == nil {
		f.err = f.fill()
	}
	if f.out.Len() > 0 {
		return f.out.Read(p)
	}
	return 0, f.err
}

// fill reads until a frame ends and hands it (or its rejection) on.
func (f *frameFilter) fill() error {
	for {
		piece, ends, err := f.lines.next(f.src)
		if err != nil {
			if f.begun && !f.over {
				f.out, f.frame = f.frame, f.out // a last frame without a newline: go-sdk decides
			}
			f.newFrame()
			if f.out.Len() > 0 {
				return nil
			}
			return err
		}
		if f.take(piece, ends) {
			return nil
		}
	}
}

// take frames the next piece of the source (ends: up to and including a
// newline) and reports whether a frame ended with something for go-sdk to
// read.
func (f *frameFilter) take(piece []byte, ends bool) bool {
	if !f.begun {
		for _, c := range piece {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				f.begun = true
				break
			}
		}
	}
	f.scan.Write(piece, math.MaxInt) // counted to the end: its end must be found
	if !f.over {
		f.frame.Write(piece)
		f.over = f.scan.Count() > maxFrameBytes || f.frame.Len() > rawFrameBytes
		if f.over {
			f.frame.Reset() // over every cap: only its id is still needed
		}
	}
	if !f.looked && f.scan.ID() != nil {
		f.lookup()
	}
	if !f.decided && f.looked && f.pending && (f.over || f.scan.Count() > f.limit) {
		f.reject() // at once: the rest of the frame is skipped
	}
	// A frame ends at a newline outside any value: go-sdk's decoder
	// requires one after each value, and a value may span lines.
	if !ends || !f.begun || !f.scan.Outside() {
		if ends && !f.begun {
			f.newFrame() // blank lines: go-sdk skips them
		}
		return f.out.Len() > 0
	}
	if !f.decided {
		f.lookup()
		switch {
		case !f.over && f.scan.Count() <= f.limit:
			f.out, f.frame = f.frame, f.out
		case f.pending:
			f.reject()
		} // else dropped: it answers nothing the layer can reject
	}
	f.newFrame()
	return f.out.Len() > 0
}

// lookup finds the pending request the frame answers, by its id, unless
// it is a request or notification of the server's.
func (f *frameFilter) lookup() {
	f.looked = true
	id := f.scan.ID()
	conn := f.conn.Load()
	if f.scan.Method() || id == nil || conn == nil {
		return
	}
	var v any
	if json.Unmarshal(id, &v) != nil { // at most 64 bytes
		return
	}
	rid, err := jsonrpc.MakeID(v)
	if err != nil {
		return
	}
	var p pendingCall
	if p, f.pending = conn.peek(rid); p.budget != nil {
		f.budget, f.limit = p.budget, p.budget.limit+frameSlack
	}
}

// reject answers the frame's request with a rejection in its place.
func (f *frameFilter) reject() {
	f.decided, f.over = true, true
	f.frame.Reset()
	if f.budget != nil {
		f.budget.rejected.Store(true)
	}
	f.out.Write(rejection(f.scan.ID()))
	f.out.WriteString("\n")
}
