package bounding

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestAbandonedRequests_Admit: with no abandoned request a new one starts
// at once; one abandoned less than abandonedGrace ago is waited for; while
// one abandoned longer ago still runs (its write is wedged), every new
// request is refused, after the rest of the grace for the first and at once
// after that; once it ends, requests start again.
func TestAbandonedRequests_Admit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a abandonedRequests
		if !a.admit(t.Context()) {
			t.Fatal("refused with no abandoned request")
		}
		ending := make(chan struct{})
		a.add(ending)
		go func() {
			time.Sleep(abandonedGrace / 4)
			close(ending)
		}()
		start := time.Now()
		if !a.admit(t.Context()) || time.Since(start) != abandonedGrace/4 {
			t.Fatalf("a request that ended within the grace: admitted after %v", time.Since(start))
		}
		wedged := make(chan struct{})
		a.add(wedged)
		start = time.Now()
		if a.admit(t.Context()) || time.Since(start) != abandonedGrace {
			t.Fatalf("a wedged request: admitted, or refused after %v", time.Since(start))
		}
		start = time.Now()
		if a.admit(t.Context()) || time.Since(start) != 0 {
			t.Fatal("a request past the grace: not refused at once")
		}
		close(wedged)
		if !a.admit(t.Context()) {
			t.Fatal("refused once the wedged request ended")
		}
	})
}
