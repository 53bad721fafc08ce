package cache

import (
	"errors"
	"testing"
)

// TestDigest_Memo: the remembered digest is reused only for an equal
// server id, protocol and entries; a failed digest is never remembered,
// and nothing is after Close.
func TestDigest_Memo(t *testing.T) {
	var m Digest[string]
	calls := 0
	get := func(server, protocol string, entries ...string) string {
		t.Helper()
		d, err := m.Get(server, protocol, entries, func() (string, error) {
			calls++
			return "digest-" + string(rune('a'+calls)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := get("s", "p", "x", "y")
	if again := get("s", "p", "x", "y"); again != base || calls != 1 {
		t.Fatalf("an equal catalog computed again (%d calls)", calls)
	}
	for _, c := range [][]string{{"s2", "p", "x", "y"}, {"s", "p2", "x", "y"}, {"s", "p", "y", "x"}, {"s", "p", "x"}, {"s", "p"}} {
		before := calls
		get(c[0], c[1], c[2:]...)
		if calls != before+1 {
			t.Errorf("%v: the remembered digest was reused", c)
		}
	}
	failure := errors.New("too large")
	if _, err := m.Get("s", "p", []string{"x"}, func() (string, error) { return "", failure }); err != failure {
		t.Fatalf("failure: %v", err)
	}
	before := calls
	get("s", "p", "x")
	if calls != before+1 {
		t.Error("a failed digest was remembered")
	}
	m.Close()
	before = calls
	get("s", "p", "x")
	get("s", "p", "x")
	if calls != before+2 {
		t.Error("a closed memo reused a digest")
	}
}
