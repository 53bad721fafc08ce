package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"purra.dev/purramcp"
	"purra.dev/purramcp/internal/strictjson"
)

// A ConfigError reports a config or lock file, or a [Config] built in Go,
// that cannot be used: Path is the JSON path of the offending value
// (dotted; a member name that is not an identifier in brackets and quotes,
// array elements by index: servers.fs.tools["remote.search"].as,
// servers.fs.args[2]; "" for the document itself) and Reason says what is
// wrong with it in fixed words. Neither ever holds a value read from the
// file or the environment, so no secret reaches an error.
//
// errors.Is(err, purramcp.ErrBindingInvalid) holds for every ConfigError,
// and purramcp.CodeOf reports mcp_binding_invalid.
type ConfigError struct {
	// Path is the JSON path of the value at fault.
	Path string
	// Reason is a fixed description of the fault.
	Reason string
}

// Error returns "fleet: PATH: REASON".
func (e *ConfigError) Error() string {
	if e.Path == "" {
		return "fleet: " + e.Reason
	}
	return "fleet: " + e.Path + ": " + e.Reason
}

// Unwrap returns a fresh mcp_binding_invalid [*purramcp.Error], so that
// errors.Is and purramcp.CodeOf see the code.
func (e *ConfigError) Unwrap() error { return &purramcp.Error{Code: purramcp.CodeBindingInvalid} }

// path is a JSON path as a list of segments: a string is a member name, an
// int an array index. It is rendered only when an error is reported.
type path []any

// with returns a fresh path with seg appended; p is never shared.
func (p path) with(seg any) path { return append(slices.Clip(p), seg) }

// String renders p as ConfigError.Path does.
func (p path) String() string {
	var b strings.Builder
	for _, seg := range p {
		switch s := seg.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(s) + "]")
		case string:
			if isIdentifier(s) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s)
				continue
			}
			quoted, _ := json.Marshal(s) // a string always marshals
			b.WriteString("[" + string(quoted) + "]")
		}
	}
	return b.String()
}

// isIdentifier reports whether s matches ^[A-Za-z_$][A-Za-z0-9_$-]*$ minus
// '$' and '-': the member names a dotted path can show unquoted.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// errAt returns a ConfigError for p.
func errAt(p path, reason string) error { return &ConfigError{Path: p.String(), Reason: reason} }

// object is a decoded JSON object: its members by name. Duplicate names
// were rejected while decoding.
type object map[string]any

// decodeJSON reads text as exactly one JSON value into nil, bool,
// json.Number, string, []any and object, rejecting invalid UTF-8, duplicate
// member names (naming the path of the repeated member), and trailing data.
// Text over maxBytes is rejected before it is read; nesting is bounded by
// maxDepth.
func decodeJSON(text []byte, maxBytes int) (any, error) {
	if len(text) > maxBytes {
		return nil, errAt(nil, "too large")
	}
	if !utf8.Valid(text) {
		return nil, errAt(nil, "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	v, err := decodeValue(dec, nil)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errAt(nil, "data after the JSON value")
	}
	return v, nil
}

// maxDepth bounds the nesting of a config or lock file; a tool schema is
// itself bounded to depth 32 by the profile, well inside it.
const maxDepth = 128

// decodeValue reads the value at p.
func decodeValue(dec *json.Decoder, p path) (any, error) {
	if len(p) > maxDepth {
		return nil, errAt(p, "nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, errAt(p, "malformed JSON")
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return decodeArray(dec, p)
		}
		if t == '{' {
			return decodeObject(dec, p)
		}
		return nil, errAt(p, "malformed JSON")
	default:
		return t, nil // nil, bool, json.Number or string
	}
}

// decodeObject reads the members of an object whose '{' was read.
func decodeObject(dec *json.Decoder, p path) (any, error) {
	obj := object{}
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return nil, errAt(p, "malformed JSON")
		}
		at := p.with(name)
		if _, dup := obj[name]; dup {
			return nil, errAt(at, "duplicate key")
		}
		if obj[name], err = decodeValue(dec, at); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, errAt(p, "malformed JSON")
	}
	return obj, nil
}

// decodeArray reads the elements of an array whose '[' was read.
func decodeArray(dec *json.Decoder, p path) (any, error) {
	arr := []any{}
	for dec.More() {
		v, err := decodeValue(dec, p.with(len(arr)))
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, errAt(p, "malformed JSON")
	}
	return arr, nil
}

// fields checks that v is an object whose members are all in known, and
// returns it. The first unknown member in sorted order is the error.
func fields(v any, p path, known ...string) (object, error) {
	obj, ok := v.(object)
	if !ok {
		return nil, errAt(p, "not an object")
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(known, name) {
			return nil, errAt(p.with(name), "unknown field")
		}
	}
	return obj, nil
}

// str returns the string at p.
func str(v any, p path) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errAt(p, "not a string")
	}
	return s, nil
}

// boolean returns the bool at p.
func boolean(v any, p path) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, errAt(p, "not a boolean")
	}
	return b, nil
}

// integer returns the integer at p, which must lie in [lo, hi].
func integer(v any, p path, lo, hi int) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errAt(p, "not a number")
	}
	i, err := strconv.Atoi(string(n))
	if err != nil || i < lo || i > hi {
		return 0, errAt(p, "not an integer in range")
	}
	return i, nil
}

// stringList returns the array of strings at p.
func stringList(v any, p path) ([]string, error) { return arrayOf(v, p, str) }

// stringMap returns the object of strings at p.
func stringMap(v any, p path) (map[string]string, error) { return objectOf(v, p, str) }

// arrayOf decodes the array at p element by element, each with each at its
// own path; the first failure is the error.
func arrayOf[T any](v any, p path, each func(any, path) (T, error)) ([]T, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errAt(p, "not an array")
	}
	out := make([]T, len(arr))
	for i, e := range arr {
		x, err := each(e, p.with(i))
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// objectOf decodes the object at p member by member, each with each at its
// own path, in sorted key order, so that the first failure, the error, is
// the same whatever the map's order.
func objectOf[T any](v any, p path, each func(any, path) (T, error)) (map[string]T, error) {
	obj, ok := v.(object)
	if !ok {
		return nil, errAt(p, "not an object")
	}
	out := make(map[string]T, len(obj))
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		x, err := each(obj[k], p.with(k))
		if err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

// toGo turns a decoded value into the plain Go values a purramcp.Snapshot
// holds (map[string]any, []any, float64, string, bool, nil). A number that
// overflows binary64 or an integral one beyond ±(2^53−1) fails, as it does
// in purramcp's own strict parser.
func toGo(v any, p path) (any, error) {
	switch t := v.(type) {
	case object:
		m, err := objectOf(t, p, toGo)
		if err != nil {
			return nil, err
		}
		return m, nil
	case []any:
		a, err := arrayOf(t, p, toGo)
		if err != nil {
			return nil, err
		}
		return a, nil
	case json.Number:
		f, ok := strictjson.NumberValue(string(t))
		if !ok {
			return nil, errAt(p, "number out of range")
		}
		return f, nil
	default:
		return t, nil
	}
}
