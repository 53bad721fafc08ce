package ecmaregexp

import (
	"testing"
	"unicode/utf8"
)

// FuzzCompile: any pattern either fails with ErrSyntax or ErrUnsupported or
// compiles to a matcher that never panics, is deterministic, and whose cost
// is positive and grows with the input.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{`^[a-z]+$`, `(?<n>a|b)*\d{2,3}`, `^(?!\.)(?=.*\d).+$`, `[\s\S-]`, `\u{1F600}|\cA`, `a{1000}`, `[`, `(?=`} {
		f.Add(seed, "abc 123")
	}
	f.Fuzz(func(t *testing.T, pattern, input string) {
		re, err := Compile(pattern)
		if err != nil {
			if err != ErrSyntax && err != ErrUnsupported {
				t.Fatalf("Compile(%q): unexpected error %v", pattern, err)
			}
			return
		}
		if !utf8.ValidString(input) {
			return // never reaches a matcher (strictjson holds valid UTF-8 only)
		}
		again, err := Compile(pattern)
		if err != nil || re.MatchString(input) != again.MatchString(input) {
			t.Fatalf("Compile(%q) is not deterministic", pattern)
		}
		if c := re.Cost(input); c < 1 || c > re.Cost(input+input+"x") {
			t.Fatalf("cost %d not positive and monotone", c)
		}
	})
}
