package egress

import (
	"net/http"
	"net/url"
	"testing"
)

func TestOriginOf(t *testing.T) {
	for _, tc := range []struct {
		url, want string
	}{
		{"https://Example.COM/a", "https://example.com:443"},
		{"https://example.com:443/a", "https://example.com:443"},
		{"https://example.com:8443", "https://example.com:8443"},
		{"HTTP://example.com", "http://example.com:80"},
		{"http://example.com:/x", "http://example.com:80"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"http://[0:0::1]:8080/", "http://[::1]:8080"},
		{"http://user:pw@127.0.0.1:9/", "http://127.0.0.1:9"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := OriginOf(u)
		if !ok || o.String() != tc.want {
			t.Errorf("OriginOf(%s) = %s %v, want %s", tc.url, o, ok, tc.want)
		}
	}
	for _, s := range []string{"ftp://example.com/", "/relative", "https:///x", "mailto:a@b"} {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := OriginOf(u); ok {
			t.Errorf("OriginOf(%s) = %s, want none", s, o)
		}
	}
	if _, ok := OriginOf(nil); ok {
		t.Errorf("OriginOf(nil) ok")
	}
}

func TestOrigin_Matches(t *testing.T) {
	u, _ := url.Parse("https://mcp.example.com/mcp")
	o, _ := OriginOf(u)
	for s, want := range map[string]bool{
		"https://mcp.example.com/other":      true,
		"https://MCP.example.com:443/":       true,
		"http://mcp.example.com/mcp":         false,
		"https://mcp.example.com:8443/mcp":   false,
		"https://evil.example.com/mcp":       false,
		"https://mcp.example.com.evil.test/": false,
		"https://mcp.example.com./mcp":       false,
	} {
		v, _ := url.Parse(s)
		if got := o.Matches(v); got != want {
			t.Errorf("Matches(%s) = %v, want %v", s, got, want)
		}
	}
}

// recorder is a RoundTripper that keeps the header of each request.
type recorder struct{ got []http.Header }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req.Header.Clone())
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: req}, nil
}

func TestAddHeaders_OnlyToTheOrigin(t *testing.T) {
	u, _ := url.Parse("https://mcp.example.com/mcp")
	o, _ := OriginOf(u)
	rec := &recorder{}
	rt := AddHeaders(o, rec, Static(map[string]string{"authorization": "Bearer s3cret", "X-Api-Key": "k3y"}))
	for _, s := range []string{"https://mcp.example.com/mcp", "https://other.example.com/mcp",
		"http://mcp.example.com/mcp", "https://mcp.example.com:444/mcp"} {
		req, err := http.NewRequest(http.MethodPost, s, http.NoBody)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Session-Id", "1")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if len(req.Header) != 1 {
			t.Errorf("the caller's request was modified: %v", req.Header)
		}
	}
	if len(rec.got) != 4 {
		t.Fatalf("%d requests, want 4", len(rec.got))
	}
	if g := rec.got[0]; g.Get("Authorization") != "Bearer s3cret" || g.Get("X-Api-Key") != "k3y" || g.Get("Mcp-Session-Id") != "1" {
		t.Errorf("same origin: header %v, want both credentials and the session id", g)
	}
	for i, g := range rec.got[1:] {
		if g.Get("Authorization") != "" || g.Get("X-Api-Key") != "" || g.Get("Mcp-Session-Id") != "1" {
			t.Errorf("other origin %d: header %v, want no credential", i, g)
		}
	}
	if AddHeaders(o, rec, Static(nil)) != http.RoundTripper(rec) {
		t.Errorf("AddHeaders without headers is not next")
	}
}

func TestAddHeaders_NilHeader(t *testing.T) {
	u, _ := url.Parse("https://mcp.example.com/mcp")
	o, _ := OriginOf(u)
	rec := &recorder{}
	resp, err := AddHeaders(o, rec, Static(map[string]string{"X-Api-Key": "k3y"})).RoundTrip(&http.Request{Method: http.MethodGet, URL: u})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if len(rec.got) != 1 || rec.got[0].Get("X-Api-Key") != "k3y" {
		t.Errorf("sent %v, want the key", rec.got)
	}
}
