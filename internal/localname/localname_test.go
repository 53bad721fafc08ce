package localname

import (
	"regexp"
	"strings"
	"testing"
)

func TestDerive(t *testing.T) {
	used := map[string]bool{"units_list": true}
	long := strings.Repeat("x", 70)
	for _, tc := range []struct{ remote, want string }{
		{"units.list", "units_list_2"},
		{"units-list", "units_list_3"},
		{"2fa.check", "_2fa_check"},
		{"a b/c", "a_b_c"},
		{long, strings.Repeat("x", 64)},
		{long, strings.Repeat("x", 62) + "_2"},
		{"", "_2"},
	} {
		if got := Derive(tc.remote, used); got != tc.want {
			t.Errorf("Derive(%q) = %q, want %q", tc.remote, got, tc.want)
		}
		if !used[tc.want] {
			t.Errorf("Derive(%q) did not add %q to used", tc.remote, tc.want)
		}
	}
	valid := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	for name := range used {
		if !valid.MatchString(name) {
			t.Errorf("%q is not a valid local name", name)
		}
	}
}
