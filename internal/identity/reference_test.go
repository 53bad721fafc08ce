package identity

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"purra.dev/purramcp/internal/strictjson"
)

// refPreImage is the encoder this package had before the hex, header and
// number fast paths and before strictjson.Emit replaced its own traversal,
// kept verbatim as the reference the differential tests compare against.
func refPreImage(v any) []byte {
	e := &refEncoder{}
	e.raw(Profile + "\n")
	e.value(v)
	return e.buf
}

type refEncoder struct{ buf []byte }

func (e *refEncoder) raw(s string) { e.buf = append(e.buf, s...) }

func (e *refEncoder) value(v any) {
	switch x := v.(type) {
	case nil:
		e.raw("n")
	case bool:
		if x {
			e.raw("t")
		} else {
			e.raw("f")
		}
	case float64:
		e.number(x)
	case string:
		e.str(x)
	case []any:
		e.header('a', len(x))
		for _, item := range x {
			e.value(item)
		}
	case *strictjson.Object:
		keys := x.Keys
		if !slices.IsSorted(keys) {
			keys = slices.Sorted(slices.Values(keys))
		}
		e.header('o', len(keys))
		for _, k := range keys {
			e.str(k)
			e.value(mustGet(x, k))
		}
	default:
		panic("purramcp: internal error: identity of a value outside the strictjson domain")
	}
}

func (e *refEncoder) header(tag byte, n int) {
	e.buf = append(e.buf, tag)
	e.buf = strconv.AppendInt(e.buf, int64(n), 10)
	e.buf = append(e.buf, ':')
}

func (e *refEncoder) number(f float64) {
	if f == 0 {
		f = 0
	}
	bits := math.Float64bits(f)
	e.buf = append(e.buf, 'd')
	for shift := 60; shift >= 0; shift -= 4 {
		e.buf = append(e.buf, hexDigits[(bits>>uint(shift))&0xf])
	}
}

var refHexPairs = func() (t [256]uint16) {
	for c := range t {
		t[c] = uint16(hexDigits[c>>4])<<8 | uint16(hexDigits[c&0xf])
	}
	return t
}()

func (e *refEncoder) str(s string) {
	e.header('s', len(s))
	start := len(e.buf)
	e.buf = append(e.buf, make([]byte, 2*len(s))...)
	dst := e.buf[start:]
	for i := 0; i < len(s); i++ {
		binary.BigEndian.PutUint16(dst[2*i:], refHexPairs[s[i]])
	}
}

// mustGet returns the member named k of o, which has one.
func mustGet(o *strictjson.Object, k string) any {
	v, ok := o.Get(k)
	if !ok {
		panic("identity: reference encoder: missing member " + k)
	}
	return v
}
