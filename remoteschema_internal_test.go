package purramcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"purra.dev/purramcp/internal/identity"
	"purra.dev/purramcp/internal/jssize"
	"purra.dev/purramcp/internal/profile"
	"purra.dev/purramcp/internal/strictjson"
	"purra.dev/purramcp/internal/testvalues"
)

// Discovery's fast paths against the paths they replace: a remote schema
// is now copied by strictjson.SnapshotShared (not Snapshot's walk), its
// root map is copied only to drop a $schema, and the schemas compiled
// through one monitor's cache share equal subtrees (one snapshot object
// and one compiled node each). refRemoteContract is the old path, written
// out: the root always copied, strictjson.Snapshot, profile.CompileWith
// alone. Every schema of a session must come out of the cache with the
// same fault, or with a snapshot, contract and compiled schema equal to
// the reference's.

// refRemoteContract is sizedRemoteContract as it was.
func refRemoteContract(schema any, size int, limits Limits, policy SchemaPolicy) (any, *strictjson.Object, *profile.Schema, error) {
	root, ok := schema.(map[string]any)
	if !ok {
		return nil, nil, nil, &schemaFault{"$", "schema"}
	}
	if size > limits.MaxSchemaBytes {
		return nil, nil, nil, &schemaFault{"$", "MaxSchemaBytes"}
	}
	declared, hasDialect := root[dialectKey]
	if hasDialect && !policy.acceptsDialect(declared) {
		return nil, nil, nil, &schemaFault{"$", dialectKey}
	}
	body := make(map[string]any, len(root))
	for k, v := range root {
		if k != dialectKey {
			body[k] = v
		}
	}
	popts := policy.profile()
	popts.Draft07 = hasDialect && isDraft07(declared)
	cl, _ := ContractLimits{SchemaBytes: limits.MaxSchemaBytes, OutputBytes: limits.MaxResultBytes}.resolve()
	snap, err := strictjson.Snapshot(body, strictjson.Limits{Depth: cl.SchemaDepth, Nodes: cl.SchemaNodes, Bytes: cl.SchemaBytes})
	if err != nil {
		return nil, nil, nil, &schemaFault{"$", "schema"}
	}
	if popts.ExtendedKeywords {
		popts.MaxNodes, popts.MaxDepth, popts.MaxBytes = cl.SchemaNodes, cl.SchemaDepth, cl.SchemaBytes
	}
	compiled, err := profile.CompileWith(snap, popts)
	if err != nil {
		var se *profile.SchemaError
		if errors.As(err, &se) {
			return nil, nil, nil, &schemaFault{se.Path, se.Keyword}
		}
		return nil, nil, nil, &schemaFault{"$", "schema"}
	}
	entry := snap.(*strictjson.Object)
	if hasDialect {
		entry = strictjson.NewObject(append(append([]string{}, entry.Keys...), dialectKey),
			append(append([]any{}, entry.Values...), declared))
	}
	return snap, entry, compiled, nil
}

// sameSnapshot compares two snapshot values exactly: kinds, the sign of a
// zero, key order, nil against empty.
func sameSnapshot(a, b any) error {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok || math.Float64bits(x) != math.Float64bits(y) {
			return fmt.Errorf("number %v against %v", a, b)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return fmt.Errorf("array %#v against %#v", a, b)
		}
		for i := range x {
			if err := sameSnapshot(x[i], y[i]); err != nil {
				return fmt.Errorf("[%d]%w", i, err)
			}
		}
	case *strictjson.Object:
		y, ok := b.(*strictjson.Object)
		if !ok || !reflect.DeepEqual(x.Keys, y.Keys) || (x.Keys == nil) != (y.Keys == nil) || len(x.Values) != len(y.Values) {
			return fmt.Errorf("object %v against %v", x.Keys, b)
		}
		for _, k := range x.Keys {
			xv, _ := x.Get(k)
			yv, _ := y.Get(k)
			if err := sameSnapshot(xv, yv); err != nil {
				return fmt.Errorf(".%s%w", k, err)
			}
		}
	default:
		if reflect.TypeOf(a) != reflect.TypeOf(b) || a != b {
			return fmt.Errorf("%#v against %#v", a, b)
		}
	}
	return nil
}

// checkAgainstReference runs schema through cache and through the
// reference and reports the first difference. values are validated with
// both compiled schemas.
func checkAgainstReference(cache *schemaCache, schema any, lim Limits, policy SchemaPolicy, values []any) error {
	size, err := jssize.Size(schema)
	if err != nil {
		return nil // not measurable: discovery fails it before either path
	}
	c, snap, gotErr := cache.remoteContract(schema, size, lim, policy)
	body, refSnap, refCompiled, wantErr := refRemoteContract(schema, size, lim, policy)
	if (gotErr == nil) != (wantErr == nil) {
		return fmt.Errorf("fault %v, reference %v", gotErr, wantErr)
	}
	if gotErr != nil {
		if *gotErr.(*schemaFault) != *wantErr.(*schemaFault) {
			return fmt.Errorf("fault %+v, reference %+v", gotErr, wantErr)
		}
		return nil
	}
	if err := sameSnapshot(snap, refSnap); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := sameSnapshot(c.schema, body); err != nil {
		return fmt.Errorf("contract schema: %w", err)
	}
	if got, want := c.SchemaDigest(), identity.Digest(body); got != want {
		return fmt.Errorf("schema digest %s, reference %s", got, want)
	}
	if policy.ExtendedKeywords {
		if (c.compiled.Inlined() == nil) != (refCompiled.Inlined() == nil) {
			return errors.New("inlined schemas differ")
		}
	} else if !reflect.DeepEqual(c.compiled, refCompiled) {
		return errors.New("compiled schemas differ")
	}
	for _, v := range values {
		vi, err := c.compiled.Validate(v, 1000)
		rvi, rerr := refCompiled.Validate(v, 1000)
		if !reflect.DeepEqual(vi, rvi) || (err == nil) != (rerr == nil) {
			return fmt.Errorf("validation of %v: %v %v, reference %v %v", v, vi, err, rvi, rerr)
		}
	}
	return nil
}

// differentialValues are snapshotted random values to validate.
func differentialCheckValues(r *rand.Rand) []any {
	var values []any
	for len(values) < 40 {
		if v, err := strictjson.Snapshot(testvalues.Plain(r, 4), identityLimits); err == nil {
			values = append(values, v)
		}
	}
	for _, text := range []string{`{"count":3,"items":[{"id":"a","kind":"page","title":"t","url":"u","score":0.5}]}`,
		`{"query":"q","limit":3,"tags":["a","b"]}`, `{"query":""}`, `{"count":-1,"items":[]}`} {
		v, err := strictjson.Parse(text, identityLimits)
		if err != nil {
			panic(err)
		}
		values = append(values, v)
	}
	return values
}

var differentialPolicies = []SchemaPolicy{{}, {DialectEquivalence: true}, {Annotations: true},
	{Annotations: true, DialectEquivalence: true, ExtendedKeywords: true}, {ExtendedKeywords: true}}

// TestDiscoveryFastPaths_RealPages: the schemas of real go-sdk pages, at
// both protocol versions (256 distinct tools and the shared search tool),
// one session's cache each, under every policy.
func TestDiscoveryFastPaths_RealPages(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 5))
	values := differentialCheckValues(r)
	lim, err := Limits{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		pages := append(discWorkPagesOf(t, 256, version, discWorkTool), discWorkPagesOf(t, 64, version, discWorkUniqueTool)...)
		for _, policy := range differentialPolicies {
			cache := &schemaCache{}
			for _, page := range pages {
				for _, tool := range page.Tools {
					for _, schema := range []any{tool.InputSchema, tool.OutputSchema} {
						if err := checkAgainstReference(cache, schema, lim, policy, values); err != nil {
							t.Fatalf("%s, %s, %+v: %v", version, tool.Name, policy, err)
						}
					}
				}
			}
		}
	}
}

// TestDiscoveryFastPaths_RandomSchemas: random schemas (accepted and
// rejected, with and without a $schema, with −0, values outside the
// decoded kinds and limits crossed) through caches of one session each.
func TestDiscoveryFastPaths_RandomSchemas(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 6))
	values := differentialCheckValues(r)
	tight, err := Limits{MaxSchemaBytes: 300}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	roomy, err := Limits{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		cache := &schemaCache{}
		policy := differentialPolicies[i%len(differentialPolicies)]
		for range 150 {
			text := randomSchema(r)
			switch r.IntN(8) {
			case 0:
				text = strings.Replace(text, `"minimum":0`, `"minimum":-0`, 1)
			case 1:
				text = strings.Replace(text, `{"type":"object",`, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",`, 1)
			case 2:
				text = strings.Replace(text, `"type":"boolean"`, `"type":"boolean","default":true,"format":"x"`, 1)
			}
			schema := decodeSchema(t, text)
			if m, ok := schema.(map[string]any); ok && r.IntN(10) == 0 {
				m["extra"] = int64(r.IntN(3)) // a kind only Snapshot's walk takes
			}
			for _, lim := range []Limits{roomy, tight} {
				if err := checkAgainstReference(cache, schema, lim, policy, values); err != nil {
					t.Fatalf("%s under %+v: %v", text, policy, err)
				}
			}
		}
	}
}

// discWorkPagesOf lists tool(0) … tool(n-1), 8 per page, through go-sdk
// at a protocol version ("": go-sdk's default).
func discWorkPagesOf(tb testing.TB, n int, version string, tool func(int) *mcp.Tool) []*mcp.ListToolsResult {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ServerOptions{PageSize: 8})
	for i := range n {
		server.AddTool(tool(i), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(context.Background(), ct,
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = cs.Close(); _ = ss.Wait() }()
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		tb.Fatalf("negotiated %s, want %s", got, version)
	}
	var pages []*mcp.ListToolsResult
	params := &mcp.ListToolsParams{}
	for {
		page, err := cs.ListTools(context.Background(), params)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, page)
		if page.NextCursor == "" {
			return pages
		}
		params = &mcp.ListToolsParams{Cursor: page.NextCursor}
	}
}

// discWorkInput and discWorkOutput are the search tool's schemas; the i-th
// tool's differ from every other tool's (see discWorkTool).
const discWorkInput = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"maxLength":%d},` +
	`"limit":{"type":"integer","minimum":1,"maximum":%d},` +
	`"tags":{"type":"array","items":{"type":"string","maxLength":64},"uniqueItems":true,"maxItems":16},` +
	`"shard_%03d":{"enum":["primary","replica"]}},` +
	`"required":["query"],"additionalProperties":false}`

const discWorkOutput = `{"type":"object","properties":{
  "count":{"type":"integer","minimum":0},
  "nextCursor":{"type":["string","null"],"maxLength":256},
  "items":{"type":"array","maxItems":%d,"items":{"type":"object","properties":{
    "id":{"type":"string","minLength":1,"maxLength":64},
    "kind":{"enum":["document","page","section","attachment"]},
    "title":{"type":"string","maxLength":200},
    "url":{"type":"string","maxLength":2048},
    "score":{"type":"number","minimum":0,"maximum":1},
    "field_%03d":{"type":"boolean"},
    "snippet":{"type":"string","maxLength":1000},
    "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":16},
    "updated":{"anyOf":[{"type":"integer","minimum":0},{"type":"null"}]}},
    "required":["id","kind","title","url","score"],"additionalProperties":false}}},
  "required":["count","items"],"additionalProperties":false}`

// discWorkUniqueOutput is discWorkOutput with every leaf schema made
// distinct by i: nothing below the root is equal between two tools.
const discWorkUniqueOutput = `{"type":"object","properties":{
  "count":{"type":"integer","minimum":%[1]d},
  "nextCursor":{"type":["string","null"],"maxLength":%[1]d},
  "items":{"type":"array","maxItems":%[1]d,"items":{"type":"object","properties":{
    "id":{"type":"string","minLength":1,"maxLength":%[1]d},
    "kind":{"enum":["document","page","section","k%[1]d"]},
    "title":{"type":"string","maxLength":%[1]d},
    "url":{"type":"string","maxLength":%[1]d},
    "score":{"type":"number","minimum":0,"maximum":%[1]d},
    "field":{"type":"boolean","description":"d%[1]d"},
    "snippet":{"type":"string","maxLength":%[1]d},
    "tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},
    "updated":{"anyOf":[{"type":"integer","minimum":%[1]d},{"type":"null","description":"n%[1]d"}]}},
    "required":["id","kind","title","url","score"],"additionalProperties":false}}},
  "required":["count","items"],"additionalProperties":false}`

// discWorkUniqueInput is discWorkInput likewise.
const discWorkUniqueInput = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":1,"maxLength":%[1]d},` +
	`"limit":{"type":"integer","minimum":1,"maximum":%[1]d},` +
	`"tags":{"type":"array","items":{"type":"string","maxLength":%[1]d},"uniqueItems":true,"maxItems":%[1]d},` +
	`"shard":{"enum":["primary","replica","r%[1]d"]}},` +
	`"required":["query"],"additionalProperties":false}`

// discWorkUniqueTool is the i-th tool whose schemas share no subtree with
// any other tool's.
func discWorkUniqueTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index.",
		InputSchema:  json.RawMessage(fmt.Sprintf(discWorkUniqueInput, 1000+i)),
		OutputSchema: json.RawMessage(fmt.Sprintf(discWorkUniqueOutput, 1000+i))}
}

func discWorkTool(i int) *mcp.Tool {
	name := fmt.Sprintf("docs.search_%03d", i)
	return &mcp.Tool{Name: name, Description: "Searches shard " + name[5:] + " of the document index.",
		InputSchema:  json.RawMessage(fmt.Sprintf(discWorkInput, 256+i, 100+i, i)),
		OutputSchema: json.RawMessage(fmt.Sprintf(discWorkOutput, 1000+i, i))}
}
