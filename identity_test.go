package purramcp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"purra.dev/purramcp"
)

// fixtureTool is the canonical remote tool of mcp_tools.json.
type fixtureTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
}

func loadFixtureTools(t testing.TB) (tool, declared fixtureTool, digest string) {
	var v struct {
		Tool                fixtureTool `json:"tool"`
		DeclaredDialectTool fixtureTool `json:"declaredDialectTool"`
		RevisionDigest      string      `json:"revisionDigest"`
	}
	if err := json.Unmarshal(readVector(t, "mcp_tools.json"), &v); err != nil {
		t.Fatal(err)
	}
	return v.Tool, v.DeclaredDialectTool, v.RevisionDigest
}

type identityEntry struct {
	remote, local, description, title string
	input, output                     map[string]any
	concurrencySafe                   bool
}

// catalogIdentity builds a revisionDigest input: schemaVersion, serverId,
// protocolVersion and the entries, sorted by local name.
func catalogIdentity(serverID, protocol string, entries ...identityEntry) map[string]any {
	list := make([]any, len(entries))
	for i, e := range entries {
		var output any
		if e.output != nil {
			output = e.output
		}
		list[i] = map[string]any{
			"remoteName": e.remote, "localName": e.local, "description": e.description,
			"inputSchema": e.input, "outputSchema": output,
			"policy":          map[string]any{"mode": "read", "title": e.title, "riskLevel": "read"},
			"concurrencySafe": e.concurrencySafe,
		}
	}
	return map[string]any{"schemaVersion": 1, "serverId": serverID, "protocolVersion": protocol, "entries": list}
}

// TestIdentityC4_CatalogDigests checks the fixture revisionDigest and every
// catalog digest derived from it (other bindings, versions, server ids).
func TestIdentityC4_CatalogDigests(t *testing.T) {
	tool, declared, fixtureDigest := loadFixtureTools(t)
	search := identityEntry{remote: "remote.search", local: "search", description: tool.Description,
		title: "Search", input: tool.InputSchema, output: tool.OutputSchema, concurrencySafe: true}
	other := identityEntry{remote: "remote.other", local: "another", description: tool.Description,
		title: "Other", input: tool.InputSchema, output: tool.OutputSchema}
	changed := search
	changed.description = "Changed description"
	textOnly := search
	textOnly.output = nil
	dialect := search
	dialect.input, dialect.output = declared.InputSchema, declared.OutputSchema
	count := identityEntry{remote: "count", local: "count", title: "Count",
		input: map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false},
		output: map[string]any{"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}},
			"required": []any{"count"}, "additionalProperties": false}}

	cases := []struct {
		name, want string
		value      map[string]any
	}{
		{"fixture", fixtureDigest, catalogIdentity("fixture", "2025-11-25", search)},
		{"fixture-2025-06-18", "d5d8ba2584e1169a9285f82218bd76e662ba9cd11aef5eb3a8cc847c48912a1c", catalogIdentity("fixture", "2025-06-18", search)},
		{"declared-dialect", "4f50042f2d82970db42ef5e7437557a2722ec73e5b2d700c035538493dd0448c", catalogIdentity("fixture", "2025-11-25", dialect)},
		{"G6-order", "d2e792eb8724832f433b1bf5ecd9822cf58dc58afe9ce13cc2761a7eebd68d5d", catalogIdentity("fixture", "2025-11-25", other, search)},
		{"G6-changed", "75f2bc87bfa454d5200c2ab8685281645c6d733cb87c177d47d73b5693f750f3", catalogIdentity("fixture", "2025-11-25", other, changed)},
		{"text-only", "9828c43572192bfbeca54e94830f6658f448945c066240f375fa4d978d043e3f", catalogIdentity("fixture", "2025-11-25", textOnly)},
		{"installed-smoke", "2f3abeae2653d364f7f1b3d3ea4c4bd5e55f64f50db3e7a128ae638adefbeea3", catalogIdentity("local", "2025-11-25", count)},
	}
	if fixtureDigest != "8cb096a7199b89dd4fcdcdae1f23b91b9d29ba0146efbbba79cd1a557e62349d" {
		t.Errorf("fixtureDigest = %q, want %q", fixtureDigest, "8cb096a7199b89dd4fcdcdae1f23b91b9d29ba0146efbbba79cd1a557e62349d")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := purramcp.IdentityDigest(tc.value)
			if err != nil {
				t.Fatalf("%v: %v", tc.name, err)
			}
			if got != tc.want {
				t.Errorf("case %s: got %q, want %q", tc.name, got, tc.want)
			}

			raw, err := json.Marshal(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			got, err = purramcp.IdentityDigest(json.RawMessage(raw))
			if err != nil {
				t.Fatalf("%v: %v", tc.name, err)
			}
			if got != tc.want {
				t.Errorf("case %s as raw JSON: got %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

// TestIdentityB1_Domain covers the identity value domain (JSON values,
// safe numbers, well-formed strings, no cycles) and its limits (depth 64,
// 65,536 nodes, 1 MiB of detached bytes).
func TestIdentityB1_Domain(t *testing.T) {
	self := map[string]any{}
	self["self"] = self
	deep := any("leaf")
	for range 65 {
		deep = []any{deep}
	}
	wide := make([]any, 65536)
	for i := range wide {
		wide[i] = nil
	}
	rejected := map[string]any{
		"NaN": math.NaN(), "+Inf": math.Inf(1), "unsafe int64": int64(1) << 53,
		"unsafe uint64": uint64(1) << 60, "unsafe float": 9007199254740992.0,
		"invalid UTF-8": "\xff", "CESU-8 surrogate": "\xed\xa0\x80",
		"invalid UTF-8 key": map[string]any{"\xff": 1}, "struct": struct{}{},
		"typed slice": []string{"a"}, "cycle": self, "depth 65": deep, "nodes 65537": wide,
		"bytes over 1 MiB": strings.Repeat("x", 1<<20), "bad json.Number": json.Number("01"),
		"raw duplicate": json.RawMessage(`{"a":1,"a":2}`), "raw lone surrogate": json.RawMessage(`"\ud800"`),
		"raw trailing": json.RawMessage(`1 2`), "empty raw": json.RawMessage(nil),
	}
	for name, v := range rejected {
		got, err := purramcp.IdentityDigest(v)
		if err == nil {
			t.Errorf("%v: got no error", name)
		}
		if got != "" {
			t.Errorf("%v: got %q, want empty", name, got)
		}
		if got := purramcp.CodeOf(err); got != "" {
			t.Errorf("%s: identity errors are plain, not coded: got %q, want %q", name, got, "")
		}
	}

	equal := [][]any{
		{1, 1.0, int64(1), uint8(1), float32(1), json.Number("1e0"), json.RawMessage("1.0")},
		{0, math.Copysign(0, -1), json.Number("-0"), json.RawMessage("-0.0"), json.RawMessage("1e-400")},
		{map[string]any{"b": 1, "a": 2}, json.RawMessage(`{"a":2,"b":1}`), map[string]any{"a": json.RawMessage("2"), "b": 1.0}},
		{math.SmallestNonzeroFloat64, json.RawMessage("4.9e-324")},
		{float64(1<<53 - 1), json.Number("9007199254740991")},
	}
	for _, group := range equal {
		first, err := purramcp.IdentityDigest(group[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range group[1:] {
			got, err := purramcp.IdentityDigest(v)
			if err != nil {
				t.Fatalf("%#v: %v", v, err)
			}
			if got != first {
				t.Errorf("%#v digests like %#v: got %q, want %q", v, group[0], got, first)
			}
		}
	}
}

func TestIdentityC3_ApprovalIntentDigest(t *testing.T) {
	var v struct {
		Intent       json.RawMessage `json:"intent"`
		IntentDigest string          `json:"intentDigest"`
		CreatedAtMs  int             `json:"createdAtMs"`
		ExpiresAtMs  int             `json:"expiresAtMs"`
		States       []string        `json:"states"`
	}
	decodeStrict(t, readVector(t, "approval_records.json"), &v)
	var intent map[string]any
	if err := json.Unmarshal(v.Intent, &intent); err != nil {
		t.Fatalf("json.Unmarshal(v.Intent, &intent): %v", err)
	}
	for name, value := range map[string]any{"decoded": intent, "raw": v.Intent} {
		got, err := purramcp.IdentityDigest(map[string]any{"profile": "purra.approval-intent/v1", "intent": value})
		if err != nil {
			t.Fatalf("%v: %v", name, err)
		}
		if got != v.IntentDigest {
			t.Errorf("intentDigest from the %s intent: got %q, want %q", name, got, v.IntentDigest)
		}
	}
	if v.IntentDigest != "e460edcc054e5f195af062e471dbc2fe077438f8f886a9f1dbadb4186c1aba28" {
		t.Errorf("v.IntentDigest = %q, want %q", v.IntentDigest, "e460edcc054e5f195af062e471dbc2fe077438f8f886a9f1dbadb4186c1aba28")
	}
}

// fuzzIdentitySeeds returns every vector text and schema, and the approval
// and MCP vector files whole and in their identity-bearing parts.
func fuzzIdentitySeeds(t testing.TB) []string {
	t.Helper()
	var seeds []string
	for _, tc := range loadOutputVectors(t).Cases {
		seeds = append(seeds, tc.Text, string(tc.Schema))
	}
	f := loadMCPFixture(t)
	seeds = append(seeds, string(f.Tool), string(f.DeclaredDialectTool), string(f.TestModelCapabilities))
	for _, tc := range f.Cases {
		seeds = append(seeds, string(tc.Arguments), string(tc.Result))
	}
	for _, sc := range f.SchemaCases {
		seeds = append(seeds, string(sc.Tool))
	}
	for _, name := range []string{"approval_records.json", "mcp_tools.json", "structured_output.json"} {
		seeds = append(seeds, string(readVector(t, name)))
	}
	return seeds
}

// FuzzIdentityDigest checks IdentityDigest on raw JSON text (B1–B4): it is
// deterministic; it fails with one fixed plain error and no digest, or
// returns 64 lowercase hex that equals both IdentityDigest of the
// encoding/json decoding (json.Number kept) of the same text and an
// independent implementation of the B2 encoding over that decoding.
func FuzzIdentityDigest(f *testing.F) {
	seeds := fuzzIdentitySeeds(f)
	if got := len(seeds); got != 2*62+3+2*14+6+3 {
		f.Fatalf("seed count: len = %d, want %d", got, 2*62+3+2*14+6+3)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	_, fixed := purramcp.IdentityDigest(json.RawMessage("{"))
	if fixed == nil {
		f.Fatalf("IdentityDigest of a broken document: got no error")
	}
	f.Fuzz(func(t *testing.T, text string) {
		digest, err := purramcp.IdentityDigest(json.RawMessage(text))
		again, errAgain := purramcp.IdentityDigest(json.RawMessage(text))
		if again != digest {
			t.Fatalf("IdentityDigest(%q) is not deterministic: got %q, want %q", text, again, digest)
		}
		if !reflect.DeepEqual(errAgain, err) {
			t.Fatalf("IdentityDigest(%q) is not deterministic: got %v, want %v", text, errAgain, err)
		}
		if err != nil {
			if digest != "" {
				t.Fatalf("IdentityDigest(%q) failed but returned a digest: got %q, want empty", text, digest)
			}
			if got, want := err.Error(), fixed.Error(); got != want {
				t.Fatalf("IdentityDigest(%q) error text: got %q, want %q", text, got, want)
			}
			var ce *purramcp.ContractError
			if errors.As(err, &ce) {
				t.Fatalf("IdentityDigest(%q) returned a coded error", text)
			}
			return
		}
		if !fuzzDigestPattern.MatchString(digest) {
			t.Fatalf("IdentityDigest(%q): %q does not match %v", text, digest, fuzzDigestPattern)
		}

		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var std any
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("encoding/json decode of %q, accepted by IdentityDigest: %v", text, err)
		}
		viaStd, err := purramcp.IdentityDigest(std)
		if err != nil {
			t.Fatalf("IdentityDigest of the encoding/json value of %q: %v", text, err)
		}
		if viaStd != digest {
			t.Errorf("IdentityDigest of %q as text and as the encoding/json value: got %q, want %q", text, viaStd, digest)
		}
		if got := fuzzReferenceDigest(std); got != digest {
			t.Errorf("IdentityDigest(%q) vs the reference encoding: got %q, want %q", text, got, digest)
		}
	})
}

// fuzzReferenceDigest is a second, deliberately plain implementation of
// purra.json-identity/v1 over encoding/json values: keys sorted as code
// point sequences, numbers as binary64 bits with −0 as +0.
func fuzzReferenceDigest(v any) string {
	h := sha256.New()
	h.Write([]byte("purra.json-identity/v1\n"))
	fuzzReferenceEncode(h, v)
	return hex.EncodeToString(h.Sum(nil))
}

func fuzzReferenceEncode(h hash.Hash, v any) {
	switch x := v.(type) {
	case nil:
		h.Write([]byte("n"))
	case bool:
		h.Write([]byte(map[bool]string{true: "t", false: "f"}[x]))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			panic(err) // accepted numbers are finite
		}
		if f == 0 {
			f = 0
		}
		fmt.Fprintf(h, "d%016x", math.Float64bits(f))
	case string:
		fmt.Fprintf(h, "s%d:%x", len(x), x)
	case []any:
		fmt.Fprintf(h, "a%d:", len(x))
		for _, item := range x {
			fuzzReferenceEncode(h, item)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return slices.Compare([]rune(a), []rune(b)) })
		fmt.Fprintf(h, "o%d:", len(keys))
		for _, k := range keys {
			fuzzReferenceEncode(h, k)
			fuzzReferenceEncode(h, x[k])
		}
	default:
		panic(fmt.Sprintf("fuzz: unexpected %T", v))
	}
}
