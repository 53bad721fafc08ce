package purramcp_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/profile"
)

// sharedConformance is where CI lays the reference project's vectors.
const sharedConformance = "../shared/conformance"

// readVector returns a pinned vector file from testdata/.
func readVector(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err, "pinned vector %s", name)
	return b
}

// decodeStrict decodes a vector file, failing on any field the loader does
// not know, so a changed vector format cannot be half-read.
func decodeStrict(t testing.TB, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
}

// TestVectorsPinned checks testdata/ against its SHA256SUMS and against
// ../shared/conformance, so neither copy can drift.
func TestVectorsPinned(t *testing.T) {
	sums := readVector(t, "SHA256SUMS")
	sc := bufio.NewScanner(bytes.NewReader(sums))
	n := 0
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "SHA256SUMS line %q", sc.Text())
		got := sha256.Sum256(readVector(t, name))
		assert.Equal(t, sum, hex.EncodeToString(got[:]), "testdata/%s drifted from SHA256SUMS", name)
		n++

		shared, err := os.ReadFile(filepath.Join(sharedConformance, name))
		if os.IsNotExist(err) {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing under CI; CI must lay ../shared beside the clone", sharedConformance)
			}
			t.Logf("skipping the comparison of %s: %s is absent", name, sharedConformance)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, shared, readVector(t, name), "testdata/%s differs from %s", name, sharedConformance)
	}
	assert.Equal(t, 4, n, "SHA256SUMS lists the three vector files and NOTICE.md")
}

type outputVectors struct {
	Profile  string         `json:"profile"`
	Keywords []string       `json:"keywords"`
	Cases    []outputVector `json:"cases"`
}

type outputVector struct {
	Name           string          `json:"name"`
	Schema         json.RawMessage `json:"schema"`
	Text           string          `json:"text"`
	Code           *string         `json:"code"`
	Mode           string          `json:"mode"`
	Limits         map[string]int  `json:"limits"`
	SchemaDigest   string          `json:"schemaDigest"`
	ContractDigest string          `json:"contractDigest"`
}

func loadOutputVectors(t testing.TB) outputVectors {
	var v outputVectors
	decodeStrict(t, readVector(t, "structured_output.json"), &v)
	require.Len(t, v.Cases, 62, "structured_output.json case count")
	return v
}

// contractLimits maps the fixture's camelCase limit names; an unknown name
// fails the test rather than being ignored.
func contractLimits(t testing.TB, m map[string]int) purramcp.ContractLimits {
	var l purramcp.ContractLimits
	fields := map[string]*int{
		"schemaBytes": &l.SchemaBytes, "outputBytes": &l.OutputBytes, "schemaDepth": &l.SchemaDepth,
		"outputDepth": &l.OutputDepth, "schemaNodes": &l.SchemaNodes, "outputNodes": &l.OutputNodes,
		"validationSteps": &l.ValidationSteps,
	}
	for k, v := range m {
		p, ok := fields[k]
		require.True(t, ok, "unknown limit %q", k)
		*p = v
	}
	return l
}

// derivedDetails are the keyword and path schema-profile.md C1.5 derives
// for every failing case.
var derivedDetails = map[string][2]string{
	"fenced": {"document", "$"}, "prefix": {"document", "$"}, "suffix": {"document", "$"},
	"two_documents": {"document", "$"}, "duplicate": {"document", "$"},
	"escaped_duplicate": {"document", "$"}, "nested_duplicate": {"document", "$"},
	"nan": {"document", "$"}, "infinity": {"document", "$"}, "overflow": {"document", "$"},
	"unsafe_integer": {"document", "$"}, "unsafe_integral_float": {"document", "$"},
	"negative_unsafe": {"document", "$"}, "lone_surrogate": {"document", "$"},
	"trailing_comma": {"document", "$"}, "leading_zero": {"document", "$"}, "bom": {"document", "$"},
	"root_array": {"type", "$"}, "root_null": {"type", "$"}, "root_string": {"type", "$"},
	"bool_not_integer": {"type", "$.v"}, "fraction_not_integer": {"type", "$.v"},
	"no_coercion": {"type", "$.v"}, "unicode_short": {"minLength", "$.v"},
	"bool_enum": {"enum", "$.v"}, "unique_object": {"uniqueItems", "$.v"},
	"same_numeric_unique": {"uniqueItems", "$.v"}, "oneof_ambiguous": {"oneOf", "$.v"},
	"range": {"maximum", "$.v"}, "no_array_coercion": {"type", "$.v"},
	"extra": {"additionalProperties", "$"}, "missing": {"required", "$.v"},
	"inherited_required": {"required", "$.toString"}, "inherited_extra": {"additionalProperties", "$"},
	"root_missing": {"schema", "$"}, "unknown": {"schema", "$"}, "required_null": {"schema", "$"},
	"type_invalid": {"schema", "$"}, "required_object": {"schema", "$"}, "items_bool": {"schema", "$"},
	"null_anyof": {"schema", "$"}, "null_enum": {"schema", "$"}, "range_reverse": {"schema", "$"},
	"unknown_mode": {"mode", "$"}, "work_limit": {"validation_steps", "$"},
	"node_limit": {"document", "$"}, "depth_limit": {"document", "$"}, "byte_limit": {"document", "$"},
}

func TestProfileC1_StructuredOutputVectors(t *testing.T) {
	vectors := loadOutputVectors(t)
	assert.Equal(t, purramcp.OutputSchemaProfile, vectors.Profile)
	digests := 0
	for _, tc := range vectors.Cases {
		if tc.SchemaDigest != "" {
			digests++
		}
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			want := ""
			if tc.Code != nil {
				want = *tc.Code
				require.Contains(t, derivedDetails, tc.Name, "case %s has no derived details", tc.Name)
			}
			opts := purramcp.ContractOptions{SchemaID: "test", SchemaVersion: "1",
				Schema: tc.Schema, Mode: tc.Mode, Limits: contractLimits(t, tc.Limits)}
			c, err := purramcp.NewContract(opts)
			t.Run("Digests", func(t *testing.T) {
				if tc.SchemaDigest == "" {
					return
				}
				require.NoError(t, err, "case %s", tc.Name)
				assert.Equal(t, tc.SchemaDigest, c.SchemaDigest(), "case %s schemaDigest", tc.Name)
				assert.Equal(t, tc.ContractDigest, c.ContractDigest(), "case %s contractDigest", tc.Name)
			})
			t.Run("Parse", func(t *testing.T) {
				var got map[string]any
				if err == nil {
					got, err = c.Parse(tc.Text)
				}
				assertOutcome(t, tc, want, got, err)
			})
			t.Run("ValidateValue", func(t *testing.T) {
				if c == nil || (tc.Code != nil && derivedDetails[tc.Name][0] == "document") {
					return // needs a contract and a document the stdlib decodes faithfully
				}
				dec := json.NewDecoder(strings.NewReader(tc.Text))
				dec.UseNumber()
				var decoded any
				require.NoError(t, dec.Decode(&decoded), "case %s", tc.Name)
				got, err := c.ValidateValue(decoded)
				assertOutcome(t, tc, want, got, err)
			})
		})
	}
	assert.Equal(t, 48, digests, "schema/contract digest pairs")
}

// assertOutcome checks a Parse or ValidateValue outcome against a case:
// the exact code, keyword and path, the fixed message, a nil map on error,
// and on success a value equal to a standard decode of the text.
func assertOutcome(t *testing.T, tc outputVector, want string, got map[string]any, err error) {
	t.Helper()
	if want == "" {
		require.NoError(t, err, "case %s", tc.Name)
		var std any
		require.NoError(t, json.Unmarshal([]byte(tc.Text), &std), "case %s", tc.Name)
		assert.Equal(t, std, any(got), "case %s value", tc.Name)
		return
	}
	require.Error(t, err, "case %s", tc.Name)
	assert.Nil(t, got, "case %s returns no value on error", tc.Name)
	var ce *purramcp.ContractError
	require.ErrorAs(t, err, &ce, "case %s", tc.Name)
	assert.Equal(t, want, ce.Code, "case %s code", tc.Name)
	assert.Equal(t, derivedDetails[tc.Name], [2]string{ce.Keyword, ce.Path}, "case %s keyword and path", tc.Name)
	assert.Equal(t, "Structured output contract validation failed", err.Error(), "case %s message", tc.Name)
	assert.NotContains(t, ce.Path+ce.Keyword, "secret-candidate", "case %s echoes candidate text", tc.Name)
}

func TestProfileA4_KeywordsMatchVectors(t *testing.T) {
	assert.Equal(t, loadOutputVectors(t).Keywords, profile.Keywords)
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
	require.NoError(t, json.Unmarshal(v.Intent, &intent))
	for name, value := range map[string]any{"decoded": intent, "raw": v.Intent} {
		got, err := purramcp.IdentityDigest(map[string]any{"profile": "purra.approval-intent/v1", "intent": value})
		require.NoError(t, err, name)
		assert.Equal(t, v.IntentDigest, got, "intentDigest from the %s intent", name)
	}
	assert.Equal(t, "e460edcc054e5f195af062e471dbc2fe077438f8f886a9f1dbadb4186c1aba28", v.IntentDigest)
}
