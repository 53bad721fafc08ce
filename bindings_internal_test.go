package purramcp

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The name patterns are matched byte by byte; they must match exactly what
// the regular expressions they replace match.
func TestNamePatterns_MatchRegexps(t *testing.T) {
	for _, c := range []struct {
		p  *namePattern
		re *regexp.Regexp
	}{
		{remoteNamePattern, regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)},
		{localNamePattern, regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)},
	} {
		r := rand.New(rand.NewPCG(14, 10))
		alphabet := []string{"a", "Z", "0", "9", "_", ".", "-", " ", "\n", "/", "é", "\xff", "\x00", "`", "{", "@", "[", ":"}
		cases := []string{"", "a", "_", "0", "a\n", "\na", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65),
			strings.Repeat("b", 128), strings.Repeat("b", 129), "docs.search_001", "search_001"}
		for range 200000 {
			var b strings.Builder
			n := r.IntN(6)
			if r.IntN(10) == 0 {
				n = 60 + r.IntN(72)
			}
			for range n {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			cases = append(cases, b.String())
		}
		for _, s := range cases {
			if got, want := c.p.MatchString(s), c.re.MatchString(s); got != want {
				t.Fatalf("%s: MatchString(%q) = %v, regexp %v", c.re, s, got, want)
			}
		}
	}
}
