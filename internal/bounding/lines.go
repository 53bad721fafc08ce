package bounding

import (
	"bytes"
	"io"
)

// lineReader hands out what a source reads piece by piece: each piece runs
// up to and including a '\n', or to the end of what one Read gave, so that
// a line of any length is seen as its bytes arrive. The io frame filter and
// the SSE body filter read their sources through it.
type lineReader struct {
	chunk []byte // what src.Read fills, made on first use (32 KiB)
	buf   []byte // the part of chunk not yet handed out
}

// next returns the next piece of src and whether it ends a line. Once a Read
// gives no bytes and an error, next returns that error and no piece; a Read
// that gives bytes and an error hands the bytes out, and the next Read
// reports the error.
func (r *lineReader) next(src io.Reader) (piece []byte, ends bool, err error) {
	for len(r.buf) == 0 {
		if r.chunk == nil {
			r.chunk = make([]byte, 32<<10)
		}
		n, err := src.Read(r.chunk)
		r.buf = r.chunk[:n]
		if n == 0 && err != nil {
			return nil, false, err
		}
	}
	piece = r.buf
	i := bytes.IndexByte(piece, '\n')
	if i >= 0 {
		piece = piece[:i+1]
	}
	r.buf = r.buf[len(piece):]
	return piece, i >= 0, nil
}
