package profile

import (
	"errors"

	"purra.dev/purramcp/internal/ecmaregexp"
	"purra.dev/purramcp/internal/strictjson"
)

// extension holds the keywords Options.ExtendedKeywords admits on one node.
// Each is asserted with JSON Schema 2020-12 semantics and every schema-node
// visit it causes is charged like any other.
type extension struct {
	exclusiveMinimum *float64           // the value must be > it
	exclusiveMaximum *float64           // the value must be < it
	propertyNames    *node              // applied to every key of an object, as a string
	additional       *node              // applied to every member not declared in properties
	pattern          *ecmaregexp.Regexp // applied, unanchored, to strings
}

// extendedKeywords are the members a schema node may carry under
// Options.ExtendedKeywords beyond Keywords (additionalProperties is already
// there; $ref and $defs never reach compile: inlining removes them).
var extendedKeywords = map[string]bool{
	"exclusiveMinimum": true, "exclusiveMaximum": true, "propertyNames": true, "pattern": true,
}

// extended reports whether k is an admitted extended keyword.
func (c *compiler) extended(k string) bool {
	return c.opts.ExtendedKeywords && extendedKeywords[k]
}

// compileExtension compiles the extended keywords of obj, if any.
func (c *compiler) compileExtension(n *node, obj *strictjson.Object) error {
	if !c.opts.ExtendedKeywords {
		return nil
	}
	var ext extension
	used := false
	for _, k := range []string{"exclusiveMinimum", "exclusiveMaximum"} {
		v, ok := obj.Get(k)
		if !ok {
			continue
		}
		f, ok := v.(float64) // the boolean draft-04 form is rejected; snapshots are safe numbers
		if !ok {
			return c.invalid(k)
		}
		if k == "exclusiveMinimum" {
			ext.exclusiveMinimum = &f
		} else {
			ext.exclusiveMaximum = &f
		}
		used = true
	}
	if v, ok := obj.Get("propertyNames"); ok {
		child, err := c.child(".propertyNames", v)
		if err != nil {
			return err
		}
		ext.propertyNames, used = child, true
	}
	if v, ok := obj.Get("additionalProperties"); ok {
		if _, isBool := v.(bool); !isBool {
			child, err := c.child(".additionalProperties", v)
			if err != nil {
				return err
			}
			ext.additional, used = child, true
		}
	}
	if v, ok := obj.Get("pattern"); ok {
		s, isString := v.(string)
		if !isString {
			return c.invalid("pattern")
		}
		re, err := c.pattern(s)
		if err != nil {
			return c.invalid("pattern")
		}
		ext.pattern, used = re, true
	}
	if used {
		n.ext = &ext
	}
	return nil
}

// MaxPatternBytesPerSchema bounds the distinct pattern source one schema
// may carry, and so the bind-time work of translating and compiling them.
const MaxPatternBytesPerSchema = 8192

var errPatternBudget = errors.New("profile: too much pattern source in one schema")

// pattern compiles s once per schema (an inlined definition repeats its
// patterns) and refuses distinct sources beyond MaxPatternBytesPerSchema.
func (c *compiler) pattern(s string) (*ecmaregexp.Regexp, error) {
	if re, ok := c.patterns[s]; ok {
		return re, nil
	}
	c.patternBytes += len(s)
	if c.patternBytes > MaxPatternBytesPerSchema {
		return nil, errPatternBudget
	}
	re, err := ecmaregexp.Compile(s) // refuses every pattern without an exact translation
	if err != nil {
		return nil, err
	}
	if c.patterns == nil {
		c.patterns = map[string]*ecmaregexp.Regexp{}
	}
	c.patterns[s] = re
	return re, nil
}

// extString applies pattern after minLength and maxLength. The match is
// charged its Cost first (at least one step, more for long strings and large
// patterns), so the budget bounds the matcher's linear-time work.
func (w *walker) extString(s string, ext *extension) (*Violation, error) {
	if ext.pattern == nil {
		return nil, nil
	}
	if err := w.chargeN(ext.pattern.Cost(s)); err != nil {
		return nil, err
	}
	if !ext.pattern.MatchString(s) {
		return w.violation("pattern"), nil
	}
	return nil, nil
}

// extNumber applies the exclusive bounds after minimum and maximum.
func extNumber(w *walker, f float64, ext *extension) *Violation {
	if ext.exclusiveMinimum != nil && f <= *ext.exclusiveMinimum {
		return w.violation("exclusiveMinimum")
	}
	if ext.exclusiveMaximum != nil && f >= *ext.exclusiveMaximum {
		return w.violation("exclusiveMaximum")
	}
	return nil
}

// propertyNames visits every key of obj, in the value's key order, as a
// string against the propertyNames schema. A failing key is reported as
// propertyNames at the object's path: the key itself, candidate text, is
// never echoed.
func (w *walker) propertyNames(obj object, ext *extension) (*Violation, error) {
	if ext.propertyNames == nil {
		return nil, nil
	}
	for _, k := range obj.keys {
		vi, err := w.visitQuiet(k, ext.propertyNames)
		if err != nil {
			return nil, err
		}
		if vi != nil {
			return w.violation("propertyNames"), nil
		}
	}
	return nil, nil
}

// additional visits every member of obj not declared in properties, in the
// value's key order, against the additionalProperties schema. A failure is
// reported as additionalProperties, whose path always renders as "$":
// undeclared keys are never echoed.
func (w *walker) additional(obj object, n *node) (*Violation, error) {
	for i, k := range obj.keys {
		if _, declared := n.properties[k]; declared {
			continue
		}
		vi, err := w.visitQuiet(obj.at(i), n.ext.additional)
		if err != nil {
			return nil, err
		}
		if vi != nil {
			return w.violation("additionalProperties"), nil
		}
	}
	return nil, nil
}
