package strictjson

import "testing"

// TestChunk_Grows: each new chunk is twice the last, capped, and never
// shorter than the request; carved slices have exactly the capacity asked.
func TestChunk_Grows(t *testing.T) {
	var c chunk[int]
	var sizes []int
	for range 12 {
		before := c.size
		s := c.carve(3, 4, 64)
		if cap(s) != 3 || len(s) != 0 {
			t.Fatalf("carve(3) = len %d cap %d", len(s), cap(s))
		}
		if c.size != before {
			sizes = append(sizes, c.size)
		}
	}
	want := []int{4, 8, 16, 32}
	if len(sizes) != len(want) {
		t.Fatalf("chunk sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Fatalf("chunk sizes %v, want %v", sizes, want)
		}
	}
	if s := c.carve(100, 4, 64); cap(s) != 100 {
		t.Fatalf("a request over the cap gets cap %d", cap(s))
	}
	if c.size != 64 {
		t.Fatalf("size %d after the cap, want 64", c.size)
	}
}
