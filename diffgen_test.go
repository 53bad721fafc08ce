package purramcp_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// The random schema and value generator of the differential tests:
// schemas inside purra.output-schema/v1 and values aimed at them.

// diffNumberClasses groups literal spellings of one numeric value. Every
// value is safe and has few significant digits, so rounding to binary64
// (the profile) and exact decimals (jsonschema uses big.Rat) order them the
// same way and never merge two classes.
var diffNumberClasses = [][]string{
	{"0", "-0", "0.0", "-0.0", "0e5", "0E-3"},
	{"1", "1.0", "1e0", "10e-1", "0.1e1", "1.000"},
	{"-1", "-1.0", "-1e0", "-10E-1"},
	{"2", "2.0", "2e0", "0.2e1", "200e-2"},
	{"3", "3.00", "30e-1"},
	{"10", "1e1", "10.0", "1E+1"},
	{"100", "1e2", "100.0"},
	{"-7", "-7.0", "-70e-1"},
	{"1.5", "1.50", "15e-1", "0.15e1"},
	{"-2.5", "-2.50", "-25e-1"},
	{"0.1", "0.10", "1e-1", "1E-1"},
	{"0.5", "5e-1", "0.50"},
	{"2.75", "275e-2"},
	{"1e-7", "0.0000001", "1E-7"},
	{"123456.5", "1.234565e5"},
	{"9007199254740991", "9007199254740991.0", "9.007199254740991e15"},
	{"-9007199254740991", "-9007199254740991.0"},
}

// diffRunes are the code points strings are built from: multi-byte UTF-8,
// astral (one code point, two UTF-16 units), a combining mark, controls
// and characters JSON must escape.
var diffRunes = []string{"a", "Z", "é", "😀", "\u0301", "日", "\ue000", "\u2028", "\x00", "\"", "\\", "\n"}

// diffNames are property and required names, some of them special in other
// languages or in JSON Schema, all plain data here.
var diffNames = []string{"a", "b", "v", "é", "😀", "10", "2", "__proto__", "toString", "$ref", ""}

var diffTypeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

type diffGen struct{ r *rand.Rand }

func newDiffGen(seed uint64) *diffGen {
	return &diffGen{r: rand.New(rand.NewPCG(seed, 0x70757272616d6370))}
}

func (g *diffGen) chance(p float64) bool { return g.r.Float64() < p }

func diffPick[T any](g *diffGen, list []T) T { return list[g.r.IntN(len(list))] }

// number returns a literal from class i in a random spelling.
func (g *diffGen) number(i int) json.Number {
	return json.Number(diffPick(g, diffNumberClasses[i]))
}

func diffNumberValue(class int) float64 {
	f, err := strconv.ParseFloat(diffNumberClasses[class][0], 64)
	if err != nil {
		panic(err)
	}
	return f
}

// diffClassOf returns the class of a literal the generator produced.
func diffClassOf(n json.Number) int {
	for i, class := range diffNumberClasses {
		if slices.Contains(class, string(n)) {
			return i
		}
	}
	panic("differential: literal outside the number classes: " + string(n))
}

// numberIn picks a class whose value lies in [lo, hi] and satisfies integral
// when set; it falls back to any class when none does.
func (g *diffGen) numberIn(lo, hi float64, integral bool) json.Number {
	var fits []int
	for i := range diffNumberClasses {
		f := diffNumberValue(i)
		if f >= lo && f <= hi && (!integral || f == math.Trunc(f)) {
			fits = append(fits, i)
		}
	}
	if len(fits) == 0 {
		return g.number(g.r.IntN(len(diffNumberClasses)))
	}
	return g.number(diffPick(g, fits))
}

func (g *diffGen) str(minLen, maxLen int) string {
	var b strings.Builder
	for range minLen + g.r.IntN(maxLen-minLen+1) {
		b.WriteString(diffPick(g, diffRunes))
	}
	return b.String()
}

// value returns an arbitrary value of the generator's domain.
func (g *diffGen) value(depth int) any {
	kinds := 4
	if depth > 0 {
		kinds = 6
	}
	switch g.r.IntN(kinds) {
	case 0:
		return nil
	case 1:
		return g.chance(0.5)
	case 2:
		return g.number(g.r.IntN(len(diffNumberClasses)))
	case 3:
		return g.str(0, 3)
	case 4:
		out := []any{}
		for range g.r.IntN(4) {
			out = append(out, g.value(depth-1))
		}
		return out
	}
	out := map[string]any{}
	for range g.r.IntN(4) {
		out[diffPick(g, diffNames)] = g.value(depth - 1)
	}
	return out
}

// respell returns a copy of v with every number in another spelling of the
// same value, so equality must be numeric (1 equals 1.0).
func (g *diffGen) respell(v any) any {
	switch x := v.(type) {
	case json.Number:
		return g.number(diffClassOf(x))
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = g.respell(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range diffSortedKeys(x) {
			out[k] = g.respell(x[k])
		}
		return out
	}
	return v
}

func diffSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// schema returns a schema node inside the profile (A4): whitelisted
// keywords only, valid values, min ≤ max for every pair.
func (g *diffGen) schema(depth int) map[string]any {
	s := map[string]any{}
	if g.chance(0.5) {
		s["type"] = g.typeKeyword()
	}
	if g.chance(0.1) {
		s["title"] = g.str(0, 2)
	}
	if g.chance(0.1) {
		s["description"] = g.str(0, 2)
	}
	if g.chance(0.15) {
		list := []any{}
		for range 1 + g.r.IntN(4) {
			list = append(list, g.value(2))
		}
		s["enum"] = list
	}
	if g.chance(0.1) {
		s["const"] = g.value(2)
	}
	// Keywords that apply to the declared type are likelier, so that
	// their violations are not all masked by type mismatches.
	likely := func(types ...string) float64 {
		if t, ok := s["type"].(string); ok && slices.Contains(types, t) {
			return 0.6
		}
		return 0.2
	}
	g.counts(s, likely("string"), "minLength", "maxLength", 3)
	g.counts(s, likely("array"), "minItems", "maxItems", 3)
	if g.chance(likely("array")) {
		s["uniqueItems"] = g.chance(0.8)
	}
	if g.chance(likely("number", "integer")) {
		g.bounds(s)
	}
	if g.chance(0.25) {
		s["required"] = g.required()
	}
	if g.chance(0.25) {
		s["additionalProperties"] = g.chance(0.3)
	}
	if depth > 0 {
		g.children(s, depth)
	}
	return s
}

func (g *diffGen) children(s map[string]any, depth int) {
	if g.chance(0.4) {
		props := map[string]any{}
		for range g.r.IntN(4) {
			props[diffPick(g, diffNames)] = g.schema(depth - 1)
		}
		s["properties"] = props
	}
	if g.chance(0.3) {
		s["items"] = g.schema(depth - 1)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if g.chance(0.15) {
			list := []any{}
			for range 1 + g.r.IntN(3) {
				list = append(list, g.schema(depth-1))
			}
			s[k] = list
		}
	}
}

func (g *diffGen) typeKeyword() any {
	if g.chance(0.6) {
		return diffPick(g, diffTypeNames)
	}
	names := slices.Clone(diffTypeNames)
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	list := []any{}
	for _, name := range names[:1+g.r.IntN(3)] {
		list = append(list, name)
	}
	return list
}

// counts sets one or both of a count pair, spelled as any integral literal.
func (g *diffGen) counts(s map[string]any, p float64, minName, maxName string, most int) {
	if !g.chance(p) {
		return
	}
	lo := g.r.IntN(most + 1)
	hi := lo + g.r.IntN(most)
	spell := func(n int) any {
		if g.chance(0.2) {
			return json.Number(strconv.Itoa(n) + ".0")
		}
		return json.Number(strconv.Itoa(n))
	}
	switch g.r.IntN(3) {
	case 0:
		s[minName] = spell(lo)
	case 1:
		s[maxName] = spell(hi)
	default:
		s[minName], s[maxName] = spell(lo), spell(hi)
	}
}

func (g *diffGen) bounds(s map[string]any) {
	a, b := g.r.IntN(len(diffNumberClasses)), g.r.IntN(len(diffNumberClasses))
	if diffNumberValue(a) > diffNumberValue(b) {
		a, b = b, a
	}
	switch g.r.IntN(3) {
	case 0:
		s["minimum"] = g.number(a)
	case 1:
		s["maximum"] = g.number(b)
	default:
		s["minimum"], s["maximum"] = g.number(a), g.number(b)
	}
}

func (g *diffGen) required() []any {
	names := map[string]bool{}
	for range g.r.IntN(3) {
		if name := diffPick(g, diffNames); name != "" {
			names[name] = true
		}
	}
	list := []any{}
	for _, name := range diffSortedKeys(names) {
		list = append(list, name)
	}
	return list
}

// valueFor returns a value aimed at schema node s: often conforming, often
// one constraint off, sometimes unrelated.
func (g *diffGen) valueFor(s map[string]any, depth int) any {
	if depth < 0 || g.chance(0.05) {
		return g.value(max(depth, 0))
	}
	if c, ok := s["const"]; ok && g.chance(0.6) {
		return g.respell(c)
	}
	if e, ok := s["enum"]; ok && g.chance(0.6) {
		return g.respell(diffPick(g, e.([]any)))
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k]; ok && g.chance(0.4) {
			return g.valueFor(diffPick(g, branches.([]any)).(map[string]any), depth)
		}
	}
	switch g.kindFor(s) {
	case "null":
		return nil
	case "boolean":
		return g.chance(0.5)
	case "integer":
		return g.numberFor(s, true)
	case "number":
		return g.numberFor(s, false)
	case "string":
		lo, hi := g.countsFor(s, "minLength", "maxLength")
		return g.str(lo, hi)
	case "array":
		return g.arrayFor(s, depth)
	}
	return g.objectFor(s, depth)
}

// kindFor picks a JSON type for a value aimed at s: one of its type names,
// else one its other keywords suggest.
func (g *diffGen) kindFor(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		if g.chance(0.9) {
			return t
		}
	case []any:
		if g.chance(0.9) {
			return diffPick(g, t).(string)
		}
	}
	var hints []string
	for kw, kind := range map[string]string{"properties": "object", "required": "object",
		"additionalProperties": "object", "items": "array", "minItems": "array",
		"uniqueItems": "array", "minLength": "string", "maxLength": "string",
		"minimum": "number", "maximum": "number"} {
		if _, ok := s[kw]; ok {
			hints = append(hints, kind)
		}
	}
	slices.Sort(hints)
	if len(hints) > 0 && g.chance(0.8) {
		return diffPick(g, hints)
	}
	return diffPick(g, diffTypeNames)
}

func (g *diffGen) numberFor(s map[string]any, integral bool) json.Number {
	lo, hi := math.Inf(-1), math.Inf(1)
	if g.chance(0.8) {
		if v, ok := s["minimum"]; ok {
			lo = diffNumberValue(diffClassOf(v.(json.Number)))
		}
		if v, ok := s["maximum"]; ok {
			hi = diffNumberValue(diffClassOf(v.(json.Number)))
		}
	}
	return g.numberIn(lo, hi, integral)
}

func diffCount(s map[string]any, name string, absent int) int {
	v, ok := s[name]
	if !ok {
		return absent
	}
	f, err := strconv.ParseFloat(string(v.(json.Number)), 64)
	if err != nil {
		panic(err)
	}
	return int(f)
}

// countsFor returns a length range for a value aimed at a count pair:
// inside the bounds, or just outside one of them.
func (g *diffGen) countsFor(s map[string]any, minName, maxName string) (int, int) {
	lo := diffCount(s, minName, 0)
	hi := max(lo, diffCount(s, maxName, lo+3))
	switch {
	case !g.chance(0.25):
		return lo, hi
	case lo > 0 && g.chance(0.5):
		return lo - 1, lo - 1
	}
	return hi + 1, hi + 1
}

func (g *diffGen) arrayFor(s map[string]any, depth int) []any {
	lo, hi := g.countsFor(s, "minItems", "maxItems")
	n := lo + g.r.IntN(hi-lo+1)
	items, _ := s["items"].(map[string]any)
	out := make([]any, 0, n)
	for range n {
		if len(out) > 0 && s["uniqueItems"] == true && g.chance(0.3) {
			out = append(out, g.respell(diffPick(g, out)))
		} else if items != nil {
			out = append(out, g.valueFor(items, depth-1))
		} else {
			out = append(out, g.value(max(depth-1, 0)))
		}
	}
	return out
}

func (g *diffGen) objectFor(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	for _, name := range diffSortedKeys(props) {
		if g.chance(0.7) {
			out[name] = g.valueFor(props[name].(map[string]any), depth-1)
		}
	}
	if req, ok := s["required"].([]any); ok {
		for _, name := range req {
			if _, done := out[name.(string)]; !done && g.chance(0.85) {
				out[name.(string)] = g.value(max(depth-1, 0))
			}
		}
	}
	if g.chance(0.2) {
		out[diffPick(g, diffNames)] = g.value(max(depth-1, 0))
	}
	return out
}

// encode writes v as JSON text with object members in a random order.
func (g *diffGen) encode(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return append(b, x...)
	case string:
		s, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		return append(b, s...)
	case []any:
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.encode(b, item)
		}
		return append(b, ']')
	case map[string]any:
		keys := diffSortedKeys(x)
		g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.encode(b, k)
			b = append(b, ':')
			b = g.encode(b, x[k])
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("differential: cannot encode %T", v))
}
