package purramcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"purra.dev/purramcp"
)

// The properties the fuzz targets check on discovery: the closed error
// surface, a catalog against its bindings, goroutine growth.

// fuzzNoGoroutineGrowth records the goroutine count now and, at the end of
// the iteration (after every later cleanup, so after the session closed),
// waits up to 5s for the count to fall back to it. Register it before the
// server starts.
func fuzzNoGoroutineGrowth(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines outlive the iteration (%d before it)", runtime.NumGoroutine(), before)
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	})
}

// fuzzLimit maps a fuzzed value onto 0 (the default) or 1..max.
func fuzzLimit(v uint32, max int) int {
	if v == 0 {
		return 0
	}
	return 1 + int(v%uint32(max))
}

// fuzzCheckError checks the closed error surface of discovery: nil
// catalog, an *Error with a code in codes and fixed text.
func fuzzCheckError(t *testing.T, catalog *purramcp.Catalog, err error, codes []string, what string) string {
	if catalog != nil {
		t.Fatalf("%s failed but returned a catalog: got %v, want nil", what, catalog)
	}
	var e *purramcp.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %T %v is not an *Error", what, err, err)
	}
	if !slices.Contains(codes, e.Code) {
		t.Fatalf("%s: %v does not contain %q", what, codes, e.Code)
	}
	if got, want := err.Error(), "purramcp: MCP tool boundary rejected the operation: "+e.Code; got != want {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
	if errors.Is(err, purramcp.ErrCanceled) {
		t.Fatalf("%s", what)
	}
	return e.Code
}

// fuzzCheckCatalog checks a discovered catalog against its bindings: a
// 64-hex digest that is the identity digest of the snapshot without it,
// entries sorted by local name, one per binding with its normalized policy,
// and registrations in the same order.
func fuzzCheckCatalog(t *testing.T, catalog *purramcp.Catalog, bindings map[string]purramcp.ToolBinding,
	protocol, what string) {
	if catalog == nil {
		t.Fatalf("%s: got nil", what)
	}
	snap := catalog.Snapshot()
	if !fuzzDigestPattern.MatchString(snap.RevisionDigest) {
		t.Fatalf("%s: %q does not match %v", what, snap.RevisionDigest, fuzzDigestPattern)
	}
	if snap.ProtocolVersion != protocol {
		t.Fatalf("%s: got %q, want %q", what, snap.ProtocolVersion, protocol)
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var identity map[string]any
	if err := json.Unmarshal(raw, &identity); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	delete(identity, "revisionDigest")
	digest, err := purramcp.IdentityDigest(identity)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if snap.RevisionDigest != digest {
		t.Fatalf("%s: digest of the snapshot minus revisionDigest: got %q, want %q", what, snap.RevisionDigest, digest)
	}

	if got := len(snap.Entries); got != len(bindings) {
		t.Fatalf("%s: len = %d, want %d", what, got, len(bindings))
	}
	if !slices.IsSortedFunc(snap.Entries, func(a, b purramcp.ToolEntry) int {
		return bytes.Compare([]byte(a.LocalName), []byte(b.LocalName))
	}) {
		t.Fatalf("%s: entries sorted by local name", what)
	}
	regs := catalog.Registrations()
	if got := len(regs); got != len(bindings) {
		t.Fatalf("%s: len = %d, want %d", what, got, len(bindings))
	}
	for i, e := range snap.Entries {
		b, ok := bindings[e.RemoteName]
		if !ok {
			t.Fatalf("%s: entry %q is not bound", what, e.RemoteName)
		}
		if e.LocalName != b.LocalName {
			t.Fatalf("%s: got %q, want %q", what, e.LocalName, b.LocalName)
		}
		if e.ConcurrencySafe != b.ConcurrencySafe {
			t.Fatalf("%s: got %v, want %v", what, e.ConcurrencySafe, b.ConcurrencySafe)
		}
		if want := (purramcp.ToolPolicy{Mode: "read", Title: fuzzTrimJS(b.Policy.Title), RiskLevel: "read"}); !reflect.DeepEqual(e.Policy, want) {
			t.Fatalf("%s: got %v, want %v", what, e.Policy, want)
		}
		if regs[i].Name != e.LocalName {
			t.Fatalf("%s: got %q, want %q", what, regs[i].Name, e.LocalName)
		}
	}
	if catalog.Stale() {
		t.Fatalf("%s", what)
	}
}

var fuzzDigestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// fuzzTrimJS is JavaScript's String.prototype.trim: ECMA-262 WhiteSpace
// (Zs, tab, VT, FF, ZWNBSP) and LineTerminator (LF, CR, LS, PS).
func fuzzTrimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return strings.ContainsRune("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff", r) ||
			(r >= 0x2000 && r <= 0x200a)
	})
}

// fuzzPageCodes are the codes discovery may report against a server that
// answers every tools/list with a result: the paging, catalog-limit, name
// and schema codes, never a transport or timeout one.
var fuzzPageCodes = []string{purramcp.CodeBindingMissing, purramcp.CodeCatalogLimitExceeded, purramcp.CodeNameConflict,
	purramcp.CodePaginationInvalid, purramcp.CodeResultInvalid, purramcp.CodeSchemaUnsupported, purramcp.CodeToolUnsupported}
