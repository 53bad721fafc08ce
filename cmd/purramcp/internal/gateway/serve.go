package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shutdownGrace bounds how long ServeHTTP waits for requests in flight once
// its context ends, before it closes their connections.
const shutdownGrace = 5 * time.Second

// ServeStdio serves one client over r and w, newline-delimited JSON-RPC as
// the MCP stdio transport defines it, until the client closes its end (r
// at EOF, or a pipe closed) or ctx ends; then it returns nil once the
// session is closed. Any other transport failure is returned. It never reads
// a token: stdio is the client's own child process. A read blocked on r
// stays blocked until r is closed or reaches EOF (for os.Stdin, the process
// exit ends it).
func (g *Gateway) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}}
	err := g.server.Run(ctx, t)
	if err == nil || ctx.Err() != nil || clientLeft(err) {
		return nil
	}
	return err
}

// clientLeft reports whether a stdio session ended because the client
// closed its end: end of input, or a pipe closed under a read or write.
func clientLeft(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// ServeHTTP serves [Gateway.HTTPHandler] on ln until ctx ends, then closes
// every downstream session, waits up to five seconds for requests in flight
// and closes what is left; it closes ln. It returns nil after a shutdown
// caused by ctx, else the error that stopped serving (an invalid opts
// included).
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	h, err := g.HTTPHandler(opts)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute, // idle keep-alive connections do not pile up
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	for ss := range g.server.Sessions() {
		_ = ss.Close()
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
