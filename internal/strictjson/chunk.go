package strictjson

// A chunk is where a snapshot or a parse cuts its containers from: one
// allocation serves many small ones, which all live as long as the value
// does. Each new chunk is twice the last one, between the first and most
// sizes a caller gives, and never shorter than what it must hold.
type chunk[T any] struct {
	rest []T // the unused tail of the current chunk
	size int // the current chunk's length
}

// carve returns an empty slice of capacity n cut from the chunk. The
// capacity is exact, so appending past it can never reach a neighbour.
func (c *chunk[T]) carve(n, first, most int) []T {
	if n == 0 {
		return make([]T, 0) // empty, not nil, and free
	}
	c.grow(n, first, most)
	s := c.rest[:0:n]
	c.rest = c.rest[n:]
	return s
}

// next returns the chunk's next element.
func (c *chunk[T]) next(first, most int) *T {
	c.grow(1, first, most)
	e := &c.rest[0]
	c.rest = c.rest[1:]
	return e
}

// grow starts a new chunk when fewer than n elements are left.
func (c *chunk[T]) grow(n, first, most int) {
	if len(c.rest) >= n {
		return
	}
	c.size = min(max(2*c.size, first), most)
	c.rest = make([]T, max(n, c.size))
}

// seed makes buf the current chunk, as if it had been allocated.
func (c *chunk[T]) seed(buf []T) {
	c.rest, c.size = buf, len(buf)
}
