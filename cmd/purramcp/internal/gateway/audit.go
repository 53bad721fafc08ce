package gateway

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"purra.dev/purramcp"
	"purra.dev/purramcp/fleet"
)

// An auditRecord is the JSON line of one event. It holds the event's fields
// and nothing else: no arguments, results, descriptions or error text.
type auditRecord struct {
	Time           string `json:"time"`
	Kind           string `json:"kind"`
	ServerID       string `json:"server,omitempty"`
	RevisionDigest string `json:"digest,omitempty"`
	LocalName      string `json:"tool,omitempty"`
	Subject        string `json:"subject,omitempty"`
	RemoteName     string `json:"remote,omitempty"`
	Code           string `json:"code"`
	Attempt        int    `json:"attempt,omitempty"`
	Pages          int    `json:"pages,omitempty"`
	Requests       int    `json:"requests"`
	ArgumentBytes  int    `json:"argumentBytes,omitempty"`
	ResultBytes    int    `json:"resultBytes,omitempty"`
	DurationMicros int64  `json:"durationMicros"`
}

// AuditLog returns an observer that writes each event to w as one JSON line
// (time in RFC 3339 UTC with nanoseconds, kind, server, digest, tool,
// subject, remote, code, attempt, pages, requests, argumentBytes,
// resultBytes, durationMicros), one Write per line. The subject is that of
// the call's verified caller (a [fleet.Principal]), never its token. It is safe for concurrent use; a
// write error is dropped, as an audit sink must never fail a call.
func AuditLog(w io.Writer) func(context.Context, purramcp.Event) {
	var mu sync.Mutex // guards w
	return func(ctx context.Context, e purramcp.Event) {
		p, _ := fleet.PrincipalFrom(ctx)
		line, err := json.Marshal(auditRecord{
			Subject:        p.Subject,
			Time:           time.Now().UTC().Format(time.RFC3339Nano),
			Kind:           e.Kind,
			ServerID:       e.ServerID,
			RevisionDigest: e.RevisionDigest,
			LocalName:      e.LocalName,
			RemoteName:     e.RemoteName,
			Code:           e.Code,
			Attempt:        e.Attempt,
			Pages:          e.Pages,
			Requests:       e.Requests,
			ArgumentBytes:  e.ArgumentBytes,
			ResultBytes:    e.ResultBytes,
			DurationMicros: e.Duration.Microseconds(),
		})
		if err != nil {
			return // unreachable: strings and integers only
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(line, '\n'))
	}
}
