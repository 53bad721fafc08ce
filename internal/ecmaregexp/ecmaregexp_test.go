package ecmaregexp

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tableRow struct {
	Pattern string `json:"pattern"`
	Input   string `json:"input"`
	Match   bool   `json:"match"`
	Valid   bool   `json:"valid"`
}

func loadTable(t *testing.T) []tableRow {
	t.Helper()
	b, err := os.ReadFile("../../testdata/ecma_patterns.json")
	require.NoError(t, err)
	var table struct {
		Node string     `json:"node"`
		Rows []tableRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(b, &table))
	require.NotEmpty(t, table.Rows)
	return table.Rows
}

// TestECMATable checks the translation against the pinned ECMA-262 results
// (scripts/ecma-patterns.mjs, Node 20): every pattern ECMA-262 rejects is
// rejected, and every accepted pattern agrees with ECMA-262 on every input.
func TestECMATable(t *testing.T) {
	rows := loadTable(t)
	compiled := map[string]*Regexp{}
	errs := map[string]error{}
	accepted, refused, syntaxRefused := map[string]bool{}, map[string]bool{}, 0
	for _, row := range rows {
		re, seen := compiled[row.Pattern]
		if !seen {
			var err error
			re, err = Compile(row.Pattern)
			compiled[row.Pattern], errs[row.Pattern] = re, err
		}
		err := errs[row.Pattern]
		if !row.Valid {
			if !assert.Error(t, err, "ECMA-262 rejects %q; so must Compile", row.Pattern) {
				continue
			}
			if !seen {
				syntaxRefused++
			}
			continue
		}
		if err != nil {
			assert.ErrorIs(t, err, ErrUnsupported, "%q is valid ECMA-262: a refusal must be ErrUnsupported", row.Pattern)
			refused[row.Pattern] = true
			continue
		}
		accepted[row.Pattern] = true
		assert.Equal(t, row.Match, re.MatchString(row.Input), "pattern %q (Go %s) on %q", row.Pattern, re, row.Input)
	}
	for p := range refused {
		t.Logf("refused: %q", p)
	}
	t.Logf("%d accepted patterns, %d valid but refused, %d syntax errors refused", len(accepted), len(refused), syntaxRefused)
	// The pinned table's census: a change in what is translated shows here.
	assert.Equal(t, 204, len(accepted), "accepted patterns")
	assert.Equal(t, 33, len(refused), "valid patterns refused as untranslatable")
	assert.Equal(t, 115, syntaxRefused, "syntax errors")
	for _, p := range []string{`^\s+$`, `\bab\b`, `^[a-zA-Z0-9._]+(?:[-._a-zA-Z0-9]*)$`, `a.b`, `[^]`, `[]`, `(?<n>a)`,
		`^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`,
		`^(?=.*\d)(?=.*[a-z])(?=.*[A-Z]).{8,}$`} {
		assert.True(t, accepted[p], "%q must be translated", p)
	}
	for _, p := range []string{`(?=a)`, `(a)\1`, `\p{L}`, `a{0,1001}`, `\B`, `^(?=a)|b`, `a(?=b)`, `^(?=(?=a))`} {
		assert.True(t, refused[p], "%q must be refused as unsupported", p)
	}
}

// TestTranslate pins the Go syntax of the constructs whose meaning differs
// most between the two engines.
func TestTranslate(t *testing.T) {
	cases := map[string]string{
		`^a$`:                    `\Aa\z`,
		`.`:                      `[\x{0}-\x{9}\x{b}-\x{c}\x{e}-\x{2027}\x{202a}-\x{d7ff}\x{e000}-\x{10ffff}]`,
		`\s`:                     `[\x{9}-\x{d}\x{20}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}-\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`,
		`\d`:                     `[\x{30}-\x{39}]`,
		`\w`:                     `[\x{30}-\x{39}\x{41}-\x{5a}\x{5f}\x{61}-\x{7a}]`,
		`[]`:                     `[^\x{0}-\x{10ffff}]`,
		`a{2,}?b{3}`:             `a{2,}b{3}`,
		`(?<n>x)|\b`:             `(?:x)|\b`,
		`\u{1F600}\ud83d\ude00-`: `\x{1f600}\x{1f600}\x{2d}`,
	}
	for pattern, want := range cases {
		got, err := Translate(pattern)
		require.NoError(t, err, pattern)
		assert.Equal(t, want, got, pattern)
	}
}

// TestBounds: oversized patterns and programs are refused, and the cost of
// a match grows with the input and the program.
func TestBounds(t *testing.T) {
	_, err := Compile(strings.Repeat("a", MaxPatternBytes+1))
	assert.ErrorIs(t, err, ErrUnsupported)
	_, err = Compile(strings.Repeat("a", MaxPatternBytes))
	assert.NoError(t, err)
	_, err = Compile(strings.Repeat(`.{1000}`, 21))
	assert.ErrorIs(t, err, ErrUnsupported, "the size estimate refuses it before Go expands the repeats")
	_, err = Compile(strings.Repeat(`.{1000}`, 19))
	assert.NoError(t, err)
	_, err = Compile(`(?:[a-z]{1000}){30}`)
	assert.ErrorIs(t, err, ErrUnsupported, "a program over MaxProgram instructions")
	_, err = Compile(strings.Repeat("(", maxNesting+2) + strings.Repeat(")", maxNesting+2))
	assert.ErrorIs(t, err, ErrUnsupported)
	re, err := Compile(`^(a|aa)+$`)
	require.NoError(t, err)
	assert.Equal(t, 1, re.Cost(""))
	assert.Greater(t, re.Cost(strings.Repeat("a", 10000)), re.Cost(strings.Repeat("a", 100)))
	assert.Equal(t, 1+(10000+1)*re.size/CostUnit, re.Cost(strings.Repeat("a", 10000)))
	// Linear time: a pattern that is exponential for a backtracking engine.
	assert.False(t, re.MatchString(strings.Repeat("a", 100000)+"b"))
}

// TestLeadingLookaheads: the parts a leading-lookahead pattern compiles to.
func TestLeadingLookaheads(t *testing.T) {
	re, err := Compile(`^(?!\.)(?=.*\d)a`)
	require.NoError(t, err)
	assert.Equal(t, `!(\A(?:\x{2e})) && \A(?:`+dotSet.class()+`*`+digitSet.class()+`) && \Aa`, re.String())
	_, err = Translate(`^(?!\.)a`)
	assert.ErrorIs(t, err, ErrUnsupported, "Translate gives one regexp only")
}

func TestErrorsDistinct(t *testing.T) {
	_, err := Compile(`a{`)
	assert.ErrorIs(t, err, ErrSyntax)
	_, err = Compile(`(?=a)`)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.False(t, errors.Is(ErrSyntax, ErrUnsupported))
}
