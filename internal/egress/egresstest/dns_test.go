package egresstest

import (
	"context"
	"testing"
	"time"
)

func TestResolver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := Resolver(map[string][]string{"internal.test": {"10.0.0.5", "fd00::5"}})
	got, err := r.LookupNetIP(ctx, "ip", "internal.test")
	if err != nil {
		t.Fatalf("LookupNetIP: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("LookupNetIP = %v, want 10.0.0.5 and fd00::5", got)
	}
}
