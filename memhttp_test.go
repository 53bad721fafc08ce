package purramcp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// memTransport is an http.RoundTripper that serves each request with its
// handler in this process, with no socket: the request body is the
// client's, the response body a pipe the handler's writes and flushes
// feed as they happen. Every wait in it is a channel or a pipe, so a
// session over it runs inside a testing/synctest bubble, where a real
// socket cannot (httptest.Server's reads block outside the bubble's clock).
// Closing the response body or cancelling the request's context ends the
// handler's writes with an error; RoundTrip returns once the handler has
// written its header or returned.
type memTransport struct{ handler http.Handler }

func (m memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &memResponse{header: http.Header{}, body: pw, started: make(chan struct{})}
	req = req.Clone(req.Context())
	if req.Body == nil {
		req.Body = http.NoBody
	}
	stop := context.AfterFunc(req.Context(), func() { _ = pr.CloseWithError(req.Context().Err()) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = pw.Close() }()
		m.handler.ServeHTTP(w, req)
		w.WriteHeader(http.StatusOK)
	}()
	select {
	case <-w.started:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		<-done
		stop()
		return nil, req.Context().Err()
	}
	body := &memBody{PipeReader: pr, done: done, stop: stop}
	return &http.Response{Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: w.sent, Body: body, ContentLength: -1, Request: req}, nil
}

// memResponse is the handler's side of a memTransport exchange.
type memResponse struct {
	header  http.Header
	sent    http.Header // the header as of WriteHeader
	body    *io.PipeWriter
	once    sync.Once
	status  int
	started chan struct{}
}

func (w *memResponse) Header() http.Header { return w.header }

func (w *memResponse) WriteHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.started)
	})
}

func (w *memResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush is a no-op: every Write already reaches the reader.
func (w *memResponse) Flush() { w.WriteHeader(http.StatusOK) }

// memBody is a response body whose Close ends the handler and waits for it.
type memBody struct {
	*io.PipeReader
	done <-chan struct{}
	stop func() bool
}

func (b *memBody) Close() error {
	_ = b.CloseWithError(errMemBodyClosed)
	<-b.done
	b.stop()
	return nil
}

var errMemBodyClosed = errors.New("memTransport: response body closed")
