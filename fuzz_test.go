package purramcp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
)

// fuzzSchemaValueSeeds pairs every structured_output.json schema with its
// text, and the mcp_tools.json input and output schemas with every case's
// arguments and structured content.
func fuzzSchemaValueSeeds(t testing.TB) [][2]string {
	t.Helper()
	var seeds [][2]string
	for _, tc := range loadOutputVectors(t).Cases {
		seeds = append(seeds, [2]string{string(tc.Schema), tc.Text})
	}
	f := loadMCPFixture(t)
	var tool struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	require.NoError(t, json.Unmarshal(f.Tool, &tool), "mcp_tools.json tool")
	for _, tc := range f.Cases {
		var result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		_ = json.Unmarshal(tc.Result, &result) // malformed results stay unseeded
		seeds = append(seeds, [2]string{string(tool.InputSchema), string(tc.Arguments)},
			[2]string{string(tool.OutputSchema), string(result.StructuredContent)})
	}
	for _, sc := range f.SchemaCases {
		seeds = append(seeds, [2]string{string(sc.Tool), "{}"})
	}
	return seeds
}

// fuzzKeywords are the keywords a schema mismatch may name (A9.2).
var fuzzKeywords = []string{"additionalProperties", "anyOf", "const", "enum", "maxItems", "maxLength",
	"maximum", "minItems", "minLength", "minimum", "oneOf", "required", "type", "uniqueItems"}

// fuzzCheckParseError asserts the closed error surface of Parse (A9).
func fuzzCheckParseError(t *testing.T, err error, text string) *purramcp.ContractError {
	var ce *purramcp.ContractError
	require.True(t, errors.As(err, &ce), "Parse(%q): error %T is not a *ContractError", text, err)
	require.Equal(t, "Structured output contract validation failed", err.Error(), "Parse(%q) error text", text)
	switch ce.Code {
	case purramcp.CodeInvalidJSON:
		require.Equal(t, [2]string{"document", "$"}, [2]string{ce.Keyword, ce.Path}, "Parse(%q)", text)
	case purramcp.CodeValidationLimitExceeded:
		require.Equal(t, [2]string{"validation_steps", "$"}, [2]string{ce.Keyword, ce.Path}, "Parse(%q)", text)
	case purramcp.CodeSchemaMismatch:
		require.Contains(t, fuzzKeywords, ce.Keyword, "Parse(%q) keyword", text)
		require.True(t, strings.HasPrefix(ce.Path, "$"), "Parse(%q) path %q", text, ce.Path)
		require.LessOrEqual(t, len(ce.Path), 512, "Parse(%q) path length", text)
		if ce.Keyword == "additionalProperties" {
			require.Equal(t, "$", ce.Path, "Parse(%q): additionalProperties never echoes a key", text)
		}
	default:
		require.Failf(t, "unexpected code", "Parse(%q) code %q", text, ce.Code)
	}
	return ce
}

// FuzzValidate builds a contract from fuzzed schema text and parses fuzzed
// value text with it (A1, A6–A9). A rejected schema is schema_invalid and
// no contract; a built contract's schema digest is the identity digest of
// the schema text. Parse is deterministic; on error it returns a nil map
// and a closed-surface error that ValidateValue of the same raw text
// repeats (up to the raw length check only Parse makes); on success ValidateValue of the result and a re-parse of its
// JSON encoding return an equal map, which also equals the encoding/json
// decoding of the text (C1.3 step 5).
func FuzzValidate(f *testing.F) {
	seeds := fuzzSchemaValueSeeds(f)
	require.Len(f, seeds, 62+2*14+6, "seed count")
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schemaText, valueText string) {
		c, err := purramcp.NewContract(purramcp.ContractOptions{
			SchemaID: "fuzz", SchemaVersion: "1", Schema: json.RawMessage(schemaText)})
		if err != nil {
			require.Nil(t, c, "NewContract(%q) failed but returned a contract", schemaText)
			var ce *purramcp.ContractError
			require.True(t, errors.As(err, &ce), "NewContract(%q): error %T", schemaText, err)
			require.Equal(t, purramcp.ContractError{Code: purramcp.CodeSchemaInvalid, Path: "$", Keyword: "schema"},
				*ce, "NewContract(%q)", schemaText)
			return
		}
		digest, err := purramcp.IdentityDigest(json.RawMessage(schemaText))
		require.NoError(t, err, "IdentityDigest of an accepted schema %q", schemaText)
		require.Equal(t, digest, c.SchemaDigest(), "schemaDigest of %q", schemaText)

		got, err := c.Parse(valueText)
		again, errAgain := c.Parse(valueText)
		if err != nil {
			require.Nil(t, got, "Parse(%q) failed but returned a map", valueText)
			ce := fuzzCheckParseError(t, err, valueText)
			require.Equal(t, err, errAgain, "Parse(%q) is not deterministic", valueText)
			if len(valueText) > 1<<20 {
				return // only Parse checks the raw text length (A6.2)
			}
			_, viaValue := c.ValidateValue(json.RawMessage(valueText))
			want := *ce
			if want.Code == purramcp.CodeInvalidJSON {
				want.Keyword = "value"
			}
			require.Equal(t, &want, viaValue, "ValidateValue(json.RawMessage(%q)) vs Parse", valueText)
			return
		}
		require.NoError(t, errAgain, "Parse(%q) is not deterministic", valueText)
		require.Equal(t, got, again, "Parse(%q) is not deterministic", valueText)
		fuzzCheckAccepted(t, c, valueText, got)
	})
}

// fuzzCheckAccepted asserts the properties of an accepted value.
func fuzzCheckAccepted(t *testing.T, c *purramcp.Contract, text string, got map[string]any) {
	require.NotNil(t, got, "Parse(%q) returned a nil map", text)
	revalidated, err := c.ValidateValue(got)
	require.NoError(t, err, "ValidateValue of the result of Parse(%q)", text)
	require.Equal(t, got, revalidated, "ValidateValue of the result of Parse(%q)", text)

	var std any
	if json.Unmarshal([]byte(text), &std) == nil {
		require.Equal(t, std, any(got), "Parse(%q) and encoding/json values", text)
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(got), "encode the result of Parse(%q)", text)
	reparsed, err := c.Parse(buf.String())
	require.NoError(t, err, "Parse of the re-encoding %q of %q", buf.String(), text)
	require.Equal(t, got, reparsed, "re-encoding %q of %q", buf.String(), text)
}

var fuzzDigestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

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
	require.Len(f, seeds, 2*62+3+2*14+6+3, "seed count")
	for _, s := range seeds {
		f.Add(s)
	}
	_, fixed := purramcp.IdentityDigest(json.RawMessage("{"))
	require.Error(f, fixed, "IdentityDigest of a broken document")
	f.Fuzz(func(t *testing.T, text string) {
		digest, err := purramcp.IdentityDigest(json.RawMessage(text))
		again, errAgain := purramcp.IdentityDigest(json.RawMessage(text))
		require.Equal(t, digest, again, "IdentityDigest(%q) is not deterministic", text)
		require.Equal(t, err, errAgain, "IdentityDigest(%q) is not deterministic", text)
		if err != nil {
			require.Empty(t, digest, "IdentityDigest(%q) failed but returned a digest", text)
			require.Equal(t, fixed.Error(), err.Error(), "IdentityDigest(%q) error text", text)
			var ce *purramcp.ContractError
			require.False(t, errors.As(err, &ce), "IdentityDigest(%q) returned a coded error", text)
			return
		}
		require.Regexp(t, fuzzDigestPattern, digest, "IdentityDigest(%q)", text)

		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var std any
		require.NoError(t, dec.Decode(&std), "encoding/json decode of %q, accepted by IdentityDigest", text)
		viaStd, err := purramcp.IdentityDigest(std)
		require.NoError(t, err, "IdentityDigest of the encoding/json value of %q", text)
		assert.Equal(t, digest, viaStd, "IdentityDigest of %q as text and as the encoding/json value", text)
		assert.Equal(t, digest, fuzzReferenceDigest(std), "IdentityDigest(%q) vs the reference encoding", text)
	})
}

// fuzzReferenceDigest is a second, deliberately plain implementation of
// purra.json-identity/v1 over encoding/json values: keys sorted as code
// point sequences (B3), numbers as binary64 bits with −0 as +0 (B2.2).
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
