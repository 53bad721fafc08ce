package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"purra.dev/purramcp"
)

const testTimeout = 10 * time.Second

// testNames is the fake DNS of the tests: no name resolves to anything
// outside this table, and nothing but loopback is ever dialed.
var testNames = map[string][]string{
	"public.test":   {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"internal.test": {"10.0.0.5"},
	"cgnat.test":    {"100.64.0.7"},
	"ula.test":      {"fd00::5"},
	"metadata.test": {"169.254.169.254"},
	"mapped.test":   {"::ffff:127.0.0.1"},
	"loop.test":     {"127.0.0.1"},
	"mixed.test":    {"10.0.0.5", "93.184.216.34"},
	"zero.test":     {"0.0.0.0"},
}

// newPolicy returns the policy of serverURL over the fake DNS.
func newPolicy(t *testing.T, serverURL string) *Policy {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p, err := New(ctx, serverURL, Options{Resolver: fakeResolver(t, testNames)})
	if err != nil {
		t.Fatalf("New(%q): %v", serverURL, err)
	}
	return p
}

// assertRefused checks that err is an *Error with rule and zone, and
// carries mcp_egress_refused.
func assertRefused(t *testing.T, err error, rule Rule, zone Zone) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *egress.Error (%s)", err, rule)
	}
	if e.Rule != rule || e.Zone != zone {
		t.Errorf("refused by %s (%v), want %s (%v)", e.Rule, e.Zone, rule, zone)
	}
	if got := purramcp.CodeOf(err); got != purramcp.CodeEgressRefused {
		t.Errorf("CodeOf = %q, want %q", got, purramcp.CodeEgressRefused)
	}
	if !errors.Is(err, purramcp.ErrEgressRefused) {
		t.Errorf("errors.Is(err, ErrEgressRefused) = false")
	}
}

func TestNew_ServerZone(t *testing.T) {
	for _, tc := range []struct {
		url    string
		zone   Zone
		origin string
	}{
		{"https://public.test/mcp", ZonePublic, "https://public.test:443"},
		{"https://PUBLIC.test:443/mcp", ZonePublic, "https://public.test:443"},
		{"https://internal.test/mcp", ZonePrivate, "https://internal.test:443"},
		{"https://cgnat.test/mcp", ZonePrivate, "https://cgnat.test:443"},
		{"https://ula.test/mcp", ZonePrivate, "https://ula.test:443"},
		{"https://metadata.test/mcp", ZoneLinkLocal, "https://metadata.test:443"},
		{"https://mapped.test/mcp", ZoneLoopback, "https://mapped.test:443"},
		{"https://mixed.test/mcp", ZonePublic, "https://mixed.test:443"},
		{"http://10.1.2.3:8080/mcp", ZonePrivate, "http://10.1.2.3:8080"},
		{"http://127.0.0.1:3000/mcp", ZoneLoopback, "http://127.0.0.1:3000"},
		{"http://[::1]:3000/mcp", ZoneLoopback, "http://[::1]:3000"},
		{"http://[::ffff:127.0.0.1]/mcp", ZoneLoopback, "http://[::ffff:127.0.0.1]:80"},
		{"http://localhost:3000/mcp", ZoneLoopback, "http://localhost:3000"},
		{"http://mcp.localhost/mcp", ZoneLoopback, "http://mcp.localhost:80"},
		{"https://[fe80::1]/mcp", ZoneLinkLocal, "https://[fe80::1]:443"},
		{"https://8.8.8.8/mcp", ZonePublic, "https://8.8.8.8:443"},
	} {
		p := newPolicy(t, tc.url)
		if p.Zone() != tc.zone || p.Origin().String() != tc.origin {
			t.Errorf("New(%q): zone %v origin %s, want %v %s", tc.url, p.Zone(), p.Origin(), tc.zone, tc.origin)
		}
	}
}

func TestNew_Refused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	opts := Options{Resolver: fakeResolver(t, testNames)}
	for _, tc := range []struct {
		url  string
		rule Rule
	}{
		{"", RuleScheme},
		{"/mcp", RuleScheme},
		{"ftp://public.test/", RuleScheme},
		{"https:///mcp", RuleScheme},
		{"ws://127.0.0.1/", RuleScheme},
		{"http://%zz/", RuleScheme},
		{"http://0.0.0.0:8080/mcp", RuleAddress},
		{"http://[::]:8080/mcp", RuleAddress},
		{"https://224.0.0.1/", RuleAddress},
		{"https://255.255.255.255/", RuleAddress},
		{"https://zero.test/", RuleAddress},
	} {
		p, err := New(ctx, tc.url, opts)
		if p != nil {
			t.Errorf("New(%q) = a policy, want an error", tc.url)
		}
		assertRefused(t, err, tc.rule, ZoneRefused)
	}
	// A name that does not resolve is the resolver's error, not a refusal.
	_, err := New(ctx, "https://unknown.test/", opts)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || purramcp.CodeOf(err) != "" {
		t.Errorf("New(unknown.test) = %v, want a *net.DNSError and no code", err)
	}
}

func TestCheckURL(t *testing.T) {
	type check struct {
		target string
		rule   Rule // "" allowed
		zone   Zone
	}
	for _, tc := range []struct {
		server string
		checks []check
	}{
		{"https://public.test/mcp", []check{
			{"https://public.test/.well-known/oauth-protected-resource", "", 0},
			{"https://auth.other.test/token", "", 0}, // a name: checked at dial
			{"https://8.8.8.8/", "", 0},
			{"http://public.test/mcp", RuleScheme, 0},
			{"http://auth.other.test/token", RuleScheme, 0},
			{"http://127.0.0.1:2375/v1.41/containers/json", RuleScheme, 0},
			{"http://localhost:2379/v3/kv/put", RuleScheme, 0},
			{"https://127.0.0.1:2375/", RuleAddress, ZoneLoopback},
			{"https://localhost/", RuleAddress, ZoneLoopback},
			{"https://app.localhost/", RuleAddress, ZoneLoopback},
			{"https://[::1]/", RuleAddress, ZoneLoopback},
			{"https://[::ffff:127.0.0.1]/", RuleAddress, ZoneLoopback},
			{"https://10.0.0.5/admin/users", RuleAddress, ZonePrivate},
			{"https://172.16.0.1/", RuleAddress, ZonePrivate},
			{"https://192.168.0.1/", RuleAddress, ZonePrivate},
			{"https://100.64.0.1/", RuleAddress, ZonePrivate},
			{"https://[fd00::1]/", RuleAddress, ZonePrivate},
			{"https://[::ffff:10.0.0.5]/", RuleAddress, ZonePrivate},
			{"https://169.254.169.254/latest/meta-data/", RuleAddress, ZoneLinkLocal},
			{"https://[fe80::1]/", RuleAddress, ZoneLinkLocal},
			{"https://0.0.0.0/", RuleAddress, ZoneRefused},
			{"https://[::]/", RuleAddress, ZoneRefused},
			{"https://224.0.0.1/", RuleAddress, ZoneRefused},
			{"https://255.255.255.255/", RuleAddress, ZoneRefused},
			{"ftp://public.test/", RuleScheme, 0},
			{"https:///x", RuleScheme, 0},
		}},
		{"http://10.1.2.3:8080/mcp", []check{
			{"http://10.1.2.3:8080/other", "", 0}, // the origin the user configured
			{"http://10.1.2.3:8081/", RuleScheme, 0},
			{"https://10.0.0.5/token", "", 0},
			{"https://192.168.1.1/token", "", 0},
			{"https://100.64.0.1/", "", 0},
			{"https://[fd00::1]/", "", 0},
			{"https://8.8.8.8/", "", 0},
			{"https://127.0.0.1/", RuleAddress, ZoneLoopback},
			{"https://localhost/", RuleAddress, ZoneLoopback},
			{"https://169.254.169.254/", RuleAddress, ZoneLinkLocal},
			{"https://[fe80::1]/", RuleAddress, ZoneLinkLocal},
			{"http://127.0.0.1/", RuleScheme, 0},
		}},
		{"https://[fe80::1]/mcp", []check{
			{"https://169.254.169.254/", "", 0},
			{"https://10.0.0.5/", "", 0},
			{"https://127.0.0.1/", RuleAddress, ZoneLoopback},
			{"http://169.254.169.254/", RuleScheme, 0},
		}},
		{"http://127.0.0.1:3000/mcp", []check{
			{"http://127.0.0.1:3001/token", "", 0},
			{"http://localhost:9/token", "", 0},
			{"http://[::1]:9/token", "", 0},
			{"https://127.0.0.1:3001/token", "", 0},
			{"https://10.0.0.5/token", "", 0},
			{"https://public.test/token", "", 0},
			{"http://public.test/token", RuleScheme, 0},
			{"http://10.0.0.5/token", RuleScheme, 0},
			{"https://169.254.169.254/", RuleAddress, ZoneLinkLocal},
			{"https://0.0.0.0/", RuleAddress, ZoneRefused},
			{"http://0.0.0.0:3000/", RuleScheme, 0},
		}},
	} {
		p := newPolicy(t, tc.server)
		for _, c := range tc.checks {
			u, err := url.Parse(c.target)
			if err != nil {
				t.Fatalf("url.Parse(%q): %v", c.target, err)
			}
			err = p.CheckURL(u)
			if c.rule == "" {
				if err != nil {
					t.Errorf("server %s: CheckURL(%s) = %v, want nil", tc.server, c.target, err)
				}
				continue
			}
			t.Run("", func(t *testing.T) { assertRefused(t, err, c.rule, c.zone) })
		}
	}
}

func TestControl_RefusesBeforeConnect(t *testing.T) {
	p := newPolicy(t, "https://public.test/mcp")
	for _, tc := range []struct {
		address string
		zone    Zone
	}{
		{"10.0.0.5:443", ZonePrivate},
		{"[::ffff:10.0.0.5]:443", ZonePrivate},
		{"100.64.0.7:443", ZonePrivate},
		{"[fd00::5]:443", ZonePrivate},
		{"169.254.169.254:80", ZoneLinkLocal},
		{"[fe80::1%lo]:443", ZoneLinkLocal},
		{"127.0.0.1:2375", ZoneLoopback},
		{"[::1]:2375", ZoneLoopback},
		{"0.0.0.0:443", ZoneRefused},
		{"255.255.255.255:443", ZoneRefused},
		{"not-an-address:443", ZoneRefused},
	} {
		assertRefused(t, p.Control("tcp", tc.address, nil), RuleAddress, tc.zone)
	}
	if err := p.Control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("Control(public) = %v, want nil", err)
	}
}

// TestControl_NamesCountByTheirAddresses dials names that the fake DNS
// resolves to internal addresses through a net.Dialer with the policy's
// Control, which records each address before refusing it: Control runs
// before connect, so no packet leaves for any of them.
func TestControl_NamesCountByTheirAddresses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p := newPolicy(t, "https://public.test/mcp")
	for _, tc := range []struct {
		name string
		addr string
		zone Zone
	}{
		{"internal.test:443", "10.0.0.5:443", ZonePrivate},
		{"cgnat.test:443", "100.64.0.7:443", ZonePrivate},
		{"ula.test:443", "[fd00::5]:443", ZonePrivate},
		{"metadata.test:80", "169.254.169.254:80", ZoneLinkLocal},
		{"mapped.test:2375", "127.0.0.1:2375", ZoneLoopback}, // the dialer unmaps it
		{"loop.test:2375", "127.0.0.1:2375", ZoneLoopback},
	} {
		var seen []string
		d := &net.Dialer{Resolver: fakeResolver(t, testNames), Control: func(network, address string, c syscall.RawConn) error {
			seen = append(seen, address)
			return p.Control(network, address, c)
		}}
		conn, err := d.DialContext(ctx, "tcp", tc.name)
		if conn != nil {
			_ = conn.Close()
			t.Fatalf("dialed %s", tc.name)
		}
		assertRefused(t, err, RuleAddress, tc.zone)
		if len(seen) != 1 || seen[0] != tc.addr {
			t.Errorf("%s: Control saw %v, want [%s]", tc.name, seen, tc.addr)
		}
	}
}

func TestCheckRedirect(t *testing.T) {
	p := newPolicy(t, "http://127.0.0.1:3000/mcp")
	req := func(s string) *http.Request {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Request{URL: u}
	}
	via := func(ss ...string) []*http.Request {
		var r []*http.Request
		for _, s := range ss {
			r = append(r, req(s))
		}
		return r
	}
	for _, tc := range []struct {
		to         string
		via        []*http.Request
		rule       Rule // CheckRedirect's; "" allowed
		originRule Rule // CheckOriginRedirect's
		zone       Zone
	}{
		{"http://127.0.0.1:3000/mcp/", via("http://127.0.0.1:3000/mcp"), "", "", 0},
		{"http://127.0.0.1:3001/", via("http://127.0.0.1:3000/mcp"), "", RuleOrigin, 0},
		{"https://127.0.0.1:3000/mcp", via("http://127.0.0.1:3000/mcp"), "", RuleOrigin, 0},
		{"http://127.0.0.1:3000/mcp", via("https://127.0.0.1:3000/mcp"), RuleDowngrade, RuleDowngrade, 0},
		{"http://127.0.0.1:3000/mcp", via("http://127.0.0.1:3000/a", "HTTPS://127.0.0.1:3001/b"), RuleDowngrade, RuleDowngrade, 0},
		{"https://169.254.169.254/", via("http://127.0.0.1:3000/mcp"), RuleAddress, RuleAddress, ZoneLinkLocal},
		{"http://10.0.0.5/", via("http://127.0.0.1:3000/mcp"), RuleScheme, RuleScheme, 0},
		{"http://127.0.0.1:3000/mcp", via("http://127.0.0.1:3000/1", "http://127.0.0.1:3000/2", "http://127.0.0.1:3000/3",
			"http://127.0.0.1:3000/4", "http://127.0.0.1:3000/5", "http://127.0.0.1:3000/6", "http://127.0.0.1:3000/7",
			"http://127.0.0.1:3000/8", "http://127.0.0.1:3000/9"), "", "", 0},
		{"http://127.0.0.1:3000/mcp", via("http://127.0.0.1:3000/1", "http://127.0.0.1:3000/2", "http://127.0.0.1:3000/3",
			"http://127.0.0.1:3000/4", "http://127.0.0.1:3000/5", "http://127.0.0.1:3000/6", "http://127.0.0.1:3000/7",
			"http://127.0.0.1:3000/8", "http://127.0.0.1:3000/9", "http://127.0.0.1:3000/10"), RuleRedirects, RuleRedirects, 0},
	} {
		for _, f := range []struct {
			name  string
			check func(*http.Request, []*http.Request) error
			rule  Rule
		}{{"CheckRedirect", p.CheckRedirect, tc.rule}, {"CheckOriginRedirect", p.CheckOriginRedirect, tc.originRule}} {
			err := f.check(req(tc.to), tc.via)
			if f.rule == "" {
				if err != nil {
					t.Errorf("%s(%s) = %v, want nil", f.name, tc.to, err)
				}
				continue
			}
			zone := ZoneRefused
			if f.rule == RuleAddress {
				zone = tc.zone
			}
			t.Run("", func(t *testing.T) { assertRefused(t, err, f.rule, zone) })
		}
	}
}

func TestError_Text(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Rule: RuleAddress, Zone: ZoneLinkLocal}, "egress: refused by rule address (link-local address): mcp_egress_refused"},
		{&Error{Rule: RuleOrigin}, "egress: refused by rule origin: mcp_egress_refused"},
		{&Error{Rule: RuleDowngrade}, "egress: refused by rule downgrade: mcp_egress_refused"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestPolicy_Secure(t *testing.T) {
	for u, want := range map[string]bool{
		"https://public.test/mcp":      true,
		"https://internal.test/mcp":    true,
		"http://127.0.0.1:3000/mcp":    true,
		"http://[::1]:3000/mcp":        true,
		"http://localhost/mcp":         true,
		"http://loop.test/mcp":         false, // resolves to loopback, but not by its text
		"http://public.test/mcp":       false,
		"http://10.1.2.3:8080/mcp":     false,
		"http://169.254.169.254/mcp":   false,
		"http://[::ffff:10.0.0.5]/mcp": false,
	} {
		if got := newPolicy(t, u).Secure(); got != want {
			t.Errorf("New(%q).Secure() = %v, want %v", u, got, want)
		}
	}
}
