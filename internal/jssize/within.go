package jssize

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"purra.dev/purramcp/internal/strictjson"
)

// Within measures v as Size does, by walking it, and stops as soon as the
// count passes limit: it returns Size(v) when that is at most limit, else
// some n > limit, having looked at no more of v than it took to pass limit
// (a string or container whose smallest possible spelling does not fit is not
// looked into at all). It allocates nothing in proportion to v.
//
// Go values are spelled as encoding/json spells them (struct tags, omitempty,
// omitzero, embedded structs, []byte as base64, nil slices and maps as null).
// A json.Number, a value whose type has its own MarshalJSON or MarshalText, a struct field
// with the ",string" option, and anything nested deeper than 1,000 levels are
// measured by marshaling that value alone, as Size does: a caller that must
// never run a type's MarshalJSON gives Within values without one. Within
// fails as Size does (NaN, infinities, unsupported types) for the part of v
// it looked at.
func Within(v any, limit int) (int, error) {
	c := counter{limit: limit}
	return c.within(v)
}

// within runs the walk and ends it as Within does.
func (c *counter) within(v any) (int, error) {
	err := c.value(v, 0)
	if errors.Is(err, errOver) {
		return c.n, nil
	}
	return c.n, err
}

// Layouts holds the encoded struct layouts of some types, worked out once by
// NewLayouts so that walks over values of those types do not repeat it. It
// is read-only after NewLayouts and safe for concurrent use.
type Layouts struct {
	fields map[reflect.Type][]field
}

// NewLayouts works out the layouts of the struct types of samples (a
// pointer counts as its element type); other samples are ignored.
func NewLayouts(samples ...any) *Layouts {
	c := counter{}
	for _, s := range samples {
		t := reflect.TypeOf(s)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct {
			c.layout(t)
		}
	}
	return &Layouts{fields: c.fields}
}

// Within is the package's Within, reading struct layouts from l first: the
// same count, the same error, the same bound on the work.
func (l *Layouts) Within(v any, limit int) (int, error) {
	c := counter{limit: limit, prepared: l.fields}
	return c.within(v)
}

// errOver stops a walk once the count passed the limit.
var errOver = errors.New("jssize: over the limit")

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	zeroerType        = reflect.TypeFor[interface{ IsZero() bool }]()
	numberType        = reflect.TypeFor[json.Number]() // written unquoted
)

// counter is one Within walk.
type counter struct {
	n, limit int
	fields   map[reflect.Type][]field // this walk's struct layouts
	prepared map[reflect.Type][]field // read-only layouts of a Layouts
}

// add counts k bytes and fails errOver once the count passed the limit.
func (c *counter) add(k int) error {
	c.n += k
	if c.n > c.limit {
		return errOver
	}
	return nil
}

// fits reports whether at least k more bytes fit under the limit; a value
// whose smallest spelling is k bytes is not walked when they do not.
func (c *counter) fits(k int) error {
	if k > c.limit-c.n {
		c.n += k
		return errOver
	}
	return nil
}

// value counts v, taking the decoded JSON shapes (what go-sdk decodes into)
// without reflection and everything else through walk.
func (c *counter) value(v any, depth int) error {
	if depth > maxFastDepth {
		return c.walk(reflect.ValueOf(v), depth)
	}
	switch x := v.(type) {
	case nil:
		return c.add(len("null"))
	case bool:
		if x {
			return c.add(len("true"))
		}
		return c.add(len("false"))
	case float64:
		n, ok := floatSize(x)
		if !ok {
			return &json.UnsupportedValueError{Str: strconv.FormatFloat(x, 'g', -1, 64)}
		}
		return c.add(n)
	case string:
		return c.str(x)
	case []any:
		if x == nil {
			return c.add(len("null"))
		}
		if err := c.fits(2 + max(2*len(x)-1, 0)); err != nil {
			return err
		}
		if err := c.add(2 + max(len(x)-1, 0)); err != nil {
			return err
		}
		for _, item := range x {
			if err := c.value(item, depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		if x == nil {
			return c.add(len("null"))
		}
		if err := c.fits(2 + max(5*len(x)-1, 0)); err != nil {
			return err
		}
		if err := c.add(2 + max(len(x)-1, 0) + len(x)); err != nil {
			return err
		}
		for k, item := range x {
			if err := c.str(k); err != nil {
				return err
			}
			if err := c.value(item, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return c.walk(reflect.ValueOf(v), depth)
}

func (c *counter) walk(v reflect.Value, depth int) error {
	if !v.IsValid() {
		return c.add(len("null"))
	}
	t := v.Type()
	if depth > maxFastDepth || t == numberType || t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		v.CanAddr() && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) {
		return c.marshaled(v)
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return c.add(len("true"))
		}
		return c.add(len("false"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var buf [24]byte
		return c.add(len(strconv.AppendInt(buf[:0], v.Int(), 10)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var buf [24]byte
		return c.add(len(strconv.AppendUint(buf[:0], v.Uint(), 10)))
	case reflect.Float32, reflect.Float64:
		n, ok := floatBitsSize(v.Float(), t.Bits())
		if !ok {
			return &json.UnsupportedValueError{Str: strconv.FormatFloat(v.Float(), 'g', -1, t.Bits())}
		}
		return c.add(n)
	case reflect.String:
		return c.str(v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return c.add(len("null"))
		}
		if v.Kind() == reflect.Interface && v.CanInterface() {
			return c.value(v.Interface(), depth+1) // the element, unboxed
		}
		return c.walk(v.Elem(), depth+1)
	case reflect.Slice:
		if v.IsNil() {
			return c.add(len("null"))
		}
		if t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(marshalerType) && !t.Elem().Implements(textMarshalerType) &&
			!reflect.PointerTo(t.Elem()).Implements(marshalerType) && !reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
			return c.add(2 + base64.StdEncoding.EncodedLen(v.Len()))
		}
		return c.list(v, depth)
	case reflect.Array:
		return c.list(v, depth)
	case reflect.Map:
		if v.IsNil() {
			return c.add(len("null"))
		}
		return c.object(v, depth)
	case reflect.Struct:
		return c.structure(v, depth)
	}
	return &json.UnsupportedTypeError{Type: t}
}

// marshaled measures v alone by Size's encoding/json path.
func (c *counter) marshaled(v reflect.Value) error {
	if !v.CanInterface() {
		return &json.UnsupportedTypeError{Type: v.Type()} // unreachable for the values the adapter measures
	}
	n, err := marshalSize(v.Interface())
	if err != nil {
		return err
	}
	return c.add(n)
}

// str counts a string; one that cannot fit even unescaped is not scanned.
func (c *counter) str(s string) error {
	if err := c.fits(2 + len(s)); err != nil {
		return err
	}
	return c.add(stringSize(s))
}

// list counts an array or slice: brackets, commas and at least one byte per
// item are checked before any item is walked.
func (c *counter) list(v reflect.Value, depth int) error {
	n := v.Len()
	if err := c.fits(2 + max(2*n-1, 0)); err != nil {
		return err
	}
	if err := c.add(2 + max(n-1, 0)); err != nil {
		return err
	}
	for i := range n {
		if err := c.walk(v.Index(i), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// object counts a map with string or integer keys (encoding/json's rules);
// any other key type is measured by marshaling.
func (c *counter) object(v reflect.Value, depth int) error {
	kt := v.Type().Key()
	switch kt.Kind() {
	case reflect.String:
		if kt.Implements(textMarshalerType) {
			return c.marshaled(v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		return c.marshaled(v)
	}
	n := v.Len()
	// Each member is at least "":0 and a comma.
	if err := c.fits(2 + max(5*n-1, 0)); err != nil {
		return err
	}
	if err := c.add(2 + max(n-1, 0) + n); err != nil {
		return err
	}
	iter := v.MapRange()
	for iter.Next() {
		k := iter.Key()
		var err error
		switch k.Kind() {
		case reflect.String:
			err = c.str(k.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			var buf [24]byte
			err = c.add(2 + len(strconv.AppendInt(buf[:0], k.Int(), 10)))
		default:
			var buf [24]byte
			err = c.add(2 + len(strconv.AppendUint(buf[:0], k.Uint(), 10)))
		}
		if err != nil {
			return err
		}
		if err := c.walk(iter.Value(), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// structure counts a struct's encoded fields.
func (c *counter) structure(v reflect.Value, depth int) error {
	fields, ok := c.layout(v.Type())
	if !ok {
		return c.marshaled(v) // a ",string" field
	}
	members := 0
	for i := range fields {
		f := &fields[i]
		fv, ok := fieldByIndex(v, f.index)
		if !ok || f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZeroValue(fv) {
			continue
		}
		if members > 0 {
			if err := c.add(1); err != nil { // comma
				return err
			}
		}
		members++
		if err := c.add(stringSize(f.name) + 1); err != nil {
			return err
		}
		if err := c.walk(fv, depth+1); err != nil {
			return err
		}
	}
	return c.add(2)
}

// fieldByIndex follows index, reporting false through a nil embedded pointer
// (encoding/json then omits the field).
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZeroValue is encoding/json's omitzero test: an IsZero method when the
// type has one, else the zero value.
func isZeroValue(v reflect.Value) bool {
	t := v.Type()
	switch {
	case t.Implements(zeroerType):
		if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && v.IsNil() {
			return true
		}
		if v.CanInterface() {
			return v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case v.CanAddr() && reflect.PointerTo(t).Implements(zeroerType) && v.Addr().CanInterface():
		return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}

// field is one encoded struct field.
type field struct {
	name                string
	index               []int
	tagged              bool
	omitEmpty, omitZero bool
	quoted              bool
}

// layout returns t's encoded fields by encoding/json's rules (exported
// fields, json tags, embedded structs promoted, the shallowest name winning
// and a tie broken by a tag, else dropped); ok is false when a field has the
// ",string" option.
func (c *counter) layout(t reflect.Type) ([]field, bool) {
	if fs, ok := c.prepared[t]; ok {
		return fs, fs == nil || fs[0].name != ""
	}
	if fs, ok := c.fields[t]; ok {
		return fs, fs == nil || fs[0].name != ""
	}
	var all []field
	type level struct {
		t     reflect.Type
		index []int
	}
	current, visited := []level{{t, nil}}, map[reflect.Type]bool{}
	for len(current) > 0 {
		var next []level
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clip(l.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{ft, index})
					continue
				}
				f := field{name: name, index: index, tagged: name != ""}
				if f.name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty":
						f.omitEmpty = true
					case "omitzero":
						f.omitZero = true
					case "string":
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							f.quoted = true
						}
					}
				}
				all = append(all, f)
			}
		}
		current = next
	}
	// Dominance (encoding/json's dominantField): per name, the shortest
	// index wins, a tagged field before an untagged one; two equally deep
	// fields that are both tagged or both untagged drop the name.
	slices.SortStableFunc(all, func(a, b field) int {
		if a.name != b.name {
			return strings.Compare(a.name, b.name)
		}
		if len(a.index) != len(b.index) {
			return len(a.index) - len(b.index)
		}
		switch {
		case a.tagged == b.tagged:
			return 0
		case a.tagged:
			return -1
		}
		return 1
	})
	var out []field
	quoted := false
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		if j-i == 1 || len(all[i].index) != len(all[i+1].index) || all[i].tagged != all[i+1].tagged {
			out = append(out, all[i])
			quoted = quoted || all[i].quoted
		}
		i = j
	}
	// encoding/json writes fields in index order; the count does not depend
	// on it, but a fixed order keeps the walk deterministic.
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	if c.fields == nil {
		c.fields = map[reflect.Type][]field{}
	}
	if quoted {
		c.fields[t] = []field{{}} // marker: measure by marshaling
		return nil, false
	}
	c.fields[t] = out
	return out, true
}

// validTag is encoding/json's test of a tag name.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// floatBitsSize is floatSize for a float32 (bits 32) or float64, spelled as
// encoding/json spells each.
func floatBitsSize(f float64, bits int) (int, bool) {
	if bits == 64 {
		return floatSize(f)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f == 0 {
		return 1, true
	}
	var buf [32]byte
	format := byte('f')
	if abs := float32(math.Abs(f)); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b := strconv.AppendFloat(buf[:0], f, format, -1, 32)
	n := len(b)
	if format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		n--
	}
	return n, true
}

// stringCost is stringSize for valid UTF-8: the one JSON-string length of
// strictjson (a quote pair, each byte, one or five more for an escape).
func stringCost(s string) (int, bool) {
	return strictjson.CheckedStringCost(s) // one pass: the check and the count
}
