// Package profile compiles and enforces the purra.output-schema/v1 schema
// profile over strictjson values.
//
// Compile inspects a snapshotted schema against the closed 18-keyword
// whitelist and the per-keyword rules; Validate walks a value depth-first,
// stops at the first violation and charges one work step per schema-node
// visit and per structural-equality call, never more.
package profile

import (
	"errors"
	"slices"
	"strconv"
	"sync"

	"purra.dev/purramcp/internal/ecmaregexp"
	"purra.dev/purramcp/internal/strictjson"
)

// Keywords is the closed keyword whitelist, sorted by code unit.
var Keywords = []string{
	"additionalProperties", "anyOf", "const", "description", "enum", "items",
	"maxItems", "maxLength", "maximum", "minItems", "minLength", "minimum",
	"oneOf", "properties", "required", "title", "type", "uniqueItems",
}

// ErrInvalid matches every inspection failure (errors.Is). Contracts never
// expose the details; a compatibility inspector may.
var ErrInvalid = errors.New("profile: schema outside purra.output-schema/v1")

// A SchemaError locates an inspection failure: Path is the JSON path of the
// offending schema node from "$" ("$.properties.q"), and Keyword the member
// that failed ("pattern", "type", …), or "schema" when the node itself is
// not an object or the root lacks "type": "object".
type SchemaError struct {
	Path    string
	Keyword string
}

// Error names the keyword and path; it is for inspectors, never for contracts.
func (e *SchemaError) Error() string {
	return "profile: schema outside purra.output-schema/v1: " + e.Keyword + " at " + e.Path
}

// Is makes every SchemaError match ErrInvalid.
func (e *SchemaError) Is(target error) bool { return target == ErrInvalid }

// compiler tracks the path of the node being inspected.
type compiler struct {
	opts Options
	path []string
	// refsAllowed admits $ref members while inline inspects the root's
	// $defs as written; inline resolves them.
	refsAllowed bool
	// patterns holds each pattern compiled so far and patternBytes their
	// total source (Options.ExtendedKeywords).
	patterns     map[string]*ecmaregexp.Regexp
	patternBytes int
	// nodes is the unused tail of the current chunk of nodes (newNode).
	nodes []node
	// sharing is Options.Sharing when it may serve this compile; lookup
	// is false when no node of this schema can be held in it yet.
	sharing *Sharing
	lookup  bool
	// Options.ParamHeaders: headers holds the root's property schemas as
	// written, names the lower-cased x-mcp-header names taken so far, root
	// is set until the root node is entered and top while a direct
	// property of the root is.
	headers   map[*strictjson.Object]bool
	names     map[string]bool
	root, top bool
}

func (c *compiler) invalid(keyword string) error {
	return &SchemaError{Path: joinPath(c.path), Keyword: keyword}
}

// child compiles the schema node at the path segment seg.
func (c *compiler) child(seg string, v any) (*node, error) {
	c.path = append(c.path, seg)
	n, err := c.node(v)
	c.path = c.path[:len(c.path)-1]
	return n, err
}

// member compiles the schema node at the path segment pre+name, pushed as
// two segments so that no path string is built unless an error needs it
// (joinPath concatenates the segments).
func (c *compiler) member(pre, name string, v any) (*node, error) {
	c.path = append(c.path, pre, name)
	n, err := c.node(v)
	c.path = c.path[:len(c.path)-2]
	return n, err
}

// element compiles the schema node at the path segment pre+"["+i+"]",
// pushed as three segments, as member does.
func (c *compiler) element(pre string, i int, v any) (*node, error) {
	c.path = append(c.path, pre, strconv.Itoa(i), "]")
	n, err := c.node(v)
	c.path = c.path[:len(c.path)-3]
	return n, err
}

// Type bits for the type keyword: an integral number carries both integer
// and number.
const (
	typeArray uint8 = 1 << iota
	typeBoolean
	typeInteger
	typeNull
	typeNumber
	typeObject
	typeString
)

var typeNames = map[string]uint8{
	"array": typeArray, "boolean": typeBoolean, "integer": typeInteger, "null": typeNull,
	"number": typeNumber, "object": typeObject, "string": typeString,
}

// node is one compiled schema node. Absent keywords leave their has* flag
// (or nil pointer) unset. The flags come first, packed into one word.
type node struct {
	types    uint8 // 0 when type is absent
	hasEnum  bool
	hasConst bool
	unique   bool
	closed   bool // additionalProperties: false
	// requiredDeclared is set, when the node has at most
	// mapPathProperties properties, if every required name is a property;
	// requiredMask then has bit i set for each required mapProps[i].
	requiredDeclared bool
	requiredMask     uint16
	enum             []any
	constant         any
	minLength        int
	maxLength        int // -1 when absent
	minItems         int
	maxItems         int // -1 when absent
	items            *node
	required         []string
	properties       map[string]*node
	// mapProps holds the properties in the order a Go map's members are
	// visited (strictjson.SortKeys): a map value's declared members are
	// visited in this order, whatever else it holds.
	mapProps []mapProp
	minimum  *float64
	maximum  *float64
	anyOf    []*node
	oneOf    []*node
	ext      *extension // nil unless Options.ExtendedKeywords compiled one
}

// A mapProp is one property of a node: its name and its node.
type mapProp struct {
	name string
	node *node
}

func (p mapProp) key() string { return p.name }

// Schema is a compiled, immutable schema.
type Schema struct {
	root    *node
	inlined *strictjson.Object
	// anyObject reports a root that asserts nothing but type "object"
	// (the envelope contract's {"type":"object"}): every object passes it
	// in one step.
	anyObject bool
}

// Inlined returns the schema that was compiled when Options.ExtendedKeywords
// inlined a $ref or removed a root $defs: every reference replaced by its
// definition, $defs removed, subtrees shared with the input and with each
// other (read only). It is nil when nothing was rewritten, so the compiled
// schema is the input itself.
func (s *Schema) Inlined() *strictjson.Object { return s.inlined }

// Compile inspects root, a strictjson snapshot, and compiles it. The root
// must be an object whose "type" is exactly "object".
func Compile(root any) (*Schema, error) { return CompileWith(root, Options{}) }

// Options widens the profile for a host that opts in explicitly. The zero
// value is purra.output-schema/v1 exactly.
type Options struct {
	// Annotations accepts the non-asserting keywords of AnnotationKeywords
	// wherever a schema node may stand. They never change validation, never
	// fill in a value, and stay in the schema (so in its digest).
	Annotations bool
	// ExtendedKeywords accepts, wherever a schema node may stand, the
	// asserting keywords exclusiveMinimum, exclusiveMaximum, propertyNames,
	// pattern and a schema-valued additionalProperties, and a root $defs
	// with local $ref pointers into it, each asserted by Validate with
	// JSON Schema 2020-12 semantics (see extension).
	ExtendedKeywords bool
	// Draft07 reports that the root declared draft-07: a $ref with sibling
	// keywords is then rejected (draft-07 ignores the siblings).
	Draft07 bool
	// MaxNodes and MaxDepth bound the schema after every $ref is inlined,
	// counted as strictjson counts nodes (keys included) and levels; they
	// apply only when ExtendedKeywords inlines something. Zero means 4096
	// nodes and depth 32.
	MaxNodes, MaxDepth int
	// MaxBytes bounds the detached bytes of the inlined schema likewise.
	// Zero means 65536.
	MaxBytes int
	// ParamHeaders accepts x-mcp-header (MCP 2026-07-28, SEP-2243) on a
	// property schema written directly in the root's properties whose type
	// is exactly "string", "integer" or "boolean", when its value is an
	// HTTP field-name token (1*tchar) no other property of the schema
	// names, compared case-insensitively. It never changes validation and
	// stays in the schema. x-mcp-header anywhere else, or failing any of
	// those rules, is rejected with keyword x-mcp-header. Compiles under it
	// never go through Sharing.
	ParamHeaders bool
	// Sharing, when set, lets this compile take the compiled node of any
	// snapshot object an earlier compile through it accepted under the same
	// options (without ExtendedKeywords, which it never serves), and keep
	// its own. It changes no outcome. When the root was the last snapshot
	// made through its Interner and that snapshot took no held object
	// (Interner.Found is 0), every object is new and none is looked up.
	Sharing *Sharing
}

// Sharing is what the compiles of one session share: an Interner for their
// snapshots, so that equal subtrees are one object, and the compiled nodes
// of those objects. Both are bounded and start afresh when full. The
// caller holds Lock across each snapshot and compile through it.
type Sharing struct {
	sync.Mutex
	objects *strictjson.Interner
	// nodes holds the compiled nodes of objects, without and with
	// Options.Annotations (the one option that changes a node without
	// ExtendedKeywords), with at most max in all.
	nodes [2]map[*strictjson.Object]*node
	kept  int
	max   int
	// chunk is the unused tail of the last compile's chunk of nodes.
	chunk []node
}

// NewSharing returns an empty Sharing holding at most max objects and max
// compiled nodes.
func NewSharing(max int) *Sharing {
	return &Sharing{objects: strictjson.NewInterner(max), max: max}
}

// Interner returns s's Interner; nil for a nil s.
func (s *Sharing) Interner() *strictjson.Interner {
	if s == nil {
		return nil
	}
	return s.objects
}

// node returns the node compiled for obj under annotations, or nil.
func (s *Sharing) node(obj *strictjson.Object, annotations bool) *node {
	return s.nodes[b2i(annotations)][obj]
}

// keep holds n, compiled for obj under annotations, starting afresh when
// max nodes are held.
func (s *Sharing) keep(obj *strictjson.Object, annotations bool, n *node) {
	i := b2i(annotations)
	if s.kept >= s.max {
		s.nodes, s.kept = [2]map[*strictjson.Object]*node{}, 0
	}
	if s.nodes[i] == nil {
		s.nodes[i] = make(map[*strictjson.Object]*node, s.max/2) // grown at most once
	}
	s.nodes[i][obj] = n
	s.kept++
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AnnotationKeywords are the keywords Options.Annotations admits, with the
// JSON kind each value must have ("any" for default).
var AnnotationKeywords = map[string]string{
	"$comment": "string", "default": "any", "deprecated": "boolean", "examples": "array",
	"format": "string", "readOnly": "boolean", "writeOnly": "boolean",
}

// CompileWith is Compile under opts.
func CompileWith(root any, opts Options) (*Schema, error) {
	c := &compiler{opts: opts}
	if !opts.ExtendedKeywords && !opts.ParamHeaders && opts.Sharing != nil {
		c.sharing, c.nodes = opts.Sharing, opts.Sharing.chunk
		c.lookup = opts.Sharing.objects.Found() > 0
		defer func() { c.sharing.chunk = c.nodes }()
	}
	obj, ok := root.(*strictjson.Object)
	if !ok {
		return nil, c.invalid("schema")
	}
	if t, ok := obj.Get("type"); !ok || t != "object" {
		return nil, c.invalid("type")
	}
	var inlined *strictjson.Object
	if opts.ExtendedKeywords {
		out, rewritten, err := c.inline(obj)
		if err != nil {
			return nil, err
		}
		if rewritten {
			root, inlined = out, out
		}
	}
	if opts.ParamHeaders {
		c.paramHeaders(obj)
	}
	n, err := c.node(root)
	if err != nil {
		return nil, err
	}
	return &Schema{root: n, inlined: inlined, anyObject: n.onlyObjectType()}, nil
}

// onlyObjectType reports whether n asserts type "object" and nothing that
// could fail on an object: no combinator, enum, const, required member,
// declared property, closed members or extended keyword (its string,
// number and array keywords never apply to an object).
func (n *node) onlyObjectType() bool {
	return n.types == typeObject && n.anyOf == nil && n.oneOf == nil && !n.hasEnum && !n.hasConst &&
		len(n.required) == 0 && len(n.properties) == 0 && !n.closed && n.ext == nil
}

func (c *compiler) node(v any) (*node, error) {
	obj, ok := v.(*strictjson.Object)
	if !ok {
		return nil, c.invalid("schema") // boolean schemas and non-objects are outside the profile
	}
	if c.lookup {
		if n := c.sharing.node(obj, c.opts.Annotations); n != nil {
			return n, nil // compiled before, so it compiles alike
		}
	}
	// One pass over the names finds every whitelisted keyword's value; the
	// steps below then read the slots in their fixed order instead of
	// looking each keyword up in the members.
	root, top := c.root, c.top
	c.root, c.top = false, false
	var kw keywordSlots
	var header any
	hasHeader := false
	for i, k := range obj.Keys {
		if slot := keywordIndex(k); slot >= 0 {
			kw.set(slot, obj.Values[i])
			continue
		}
		if k == paramHeaderKeyword && top && c.headers[obj] {
			header, hasHeader = obj.Values[i], true
			continue
		}
		if !c.annotation(k, obj.Values[i]) && !c.extended(k) && !(c.refsAllowed && k == "$ref") {
			return nil, c.invalid(k)
		}
	}
	if hasHeader {
		if err := c.paramHeader(header, &kw); err != nil {
			return nil, err
		}
	}
	n := c.newNode()
	if err := c.compileType(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileAnnotations(n, &kw); err != nil {
		return nil, err
	}
	c.top = root && c.headers != nil // the root's own properties may carry x-mcp-header
	if err := c.compileProperties(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileRequired(n, &kw); err != nil {
		return nil, err
	}
	n.indexRequired()
	if err := c.compileFlags(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileItems(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileBranches(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileValues(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileRanges(n, &kw); err != nil {
		return nil, err
	}
	if err := c.compileExtension(n, obj); err != nil {
		return nil, err
	}
	if c.sharing != nil {
		c.sharing.keep(obj, c.opts.Annotations, n)
	}
	return n, nil
}

// newNode returns a fresh node with its absent-bound markers set, carved
// from a chunk of nodeChunk nodes shared by some of the schema's nodes (they
// all live as long as the compiled schema does).
func (c *compiler) newNode() *node {
	if len(c.nodes) == 0 {
		c.nodes = make([]node, nodeChunk)
	}
	n := &c.nodes[0]
	c.nodes = c.nodes[1:]
	n.maxLength, n.maxItems = -1, -1
	return n
}

// nodeChunk is the number of nodes allocated at once: small, since most
// schemas have few nodes and a chunk lives as long as any of its nodes.
const nodeChunk = 4

// Indexes of the Keywords in keywordSlots.
const (
	kwAdditionalProperties = iota
	kwAnyOf
	kwConst
	kwDescription
	kwEnum
	kwItems
	kwMaxItems
	kwMaxLength
	kwMaximum
	kwMinItems
	kwMinLength
	kwMinimum
	kwOneOf
	kwProperties
	kwRequired
	kwTitle
	kwType
	kwUniqueItems
	kwCount
)

// keywordIndex returns the index of k in Keywords, or -1.
func keywordIndex(k string) int {
	switch k {
	case "additionalProperties":
		return kwAdditionalProperties
	case "anyOf":
		return kwAnyOf
	case "const":
		return kwConst
	case "description":
		return kwDescription
	case "enum":
		return kwEnum
	case "items":
		return kwItems
	case "maxItems":
		return kwMaxItems
	case "maxLength":
		return kwMaxLength
	case "maximum":
		return kwMaximum
	case "minItems":
		return kwMinItems
	case "minLength":
		return kwMinLength
	case "minimum":
		return kwMinimum
	case "oneOf":
		return kwOneOf
	case "properties":
		return kwProperties
	case "required":
		return kwRequired
	case "title":
		return kwTitle
	case "type":
		return kwType
	case "uniqueItems":
		return kwUniqueItems
	}
	return -1
}

// keywordSlots holds the values of one node's whitelisted keywords, as
// Object.Get would return them.
type keywordSlots struct {
	v   [kwCount]any
	has uint32
}

func (s *keywordSlots) set(i int, v any) { s.v[i], s.has = v, s.has|1<<i }

// get is Object.Get of Keywords[i].
func (s *keywordSlots) get(i int) (any, bool) { return s.v[i], s.has&(1<<i) != 0 }

// annotation reports whether k is an admitted annotation with a value of
// the right kind. Annotation values are data, never inspected as schemas.
func (c *compiler) annotation(k string, v any) bool {
	if !c.opts.Annotations {
		return false
	}
	switch AnnotationKeywords[k] {
	case "any":
		return true
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

func (c *compiler) compileType(n *node, kw *keywordSlots) error {
	t, ok := kw.get(kwType)
	if !ok {
		return nil
	}
	var names []any
	switch x := t.(type) {
	case string:
		names = []any{x}
	case []any:
		names = x
	}
	if len(names) == 0 {
		return c.invalid("type")
	}
	for _, name := range names {
		s, ok := name.(string)
		bit, known := typeNames[s]
		if !ok || !known || n.types&bit != 0 {
			return c.invalid("type") // non-string, unknown or duplicate type name
		}
		n.types |= bit
	}
	return nil
}

func (c *compiler) compileAnnotations(_ *node, kw *keywordSlots) error {
	if v, ok := kw.get(kwTitle); ok {
		if _, isString := v.(string); !isString {
			return c.invalid("title")
		}
	}
	if v, ok := kw.get(kwDescription); ok {
		if _, isString := v.(string); !isString {
			return c.invalid("description")
		}
	}
	return nil
}

func (c *compiler) compileProperties(n *node, kw *keywordSlots) error {
	top := c.top
	c.top = false
	v, ok := kw.get(kwProperties)
	if !ok {
		return nil
	}
	props, ok := v.(*strictjson.Object)
	if !ok {
		return c.invalid("properties")
	}
	n.properties = make(map[string]*node, props.Len())
	for i, name := range props.Keys {
		c.top = top
		child, err := c.member(".properties.", name, props.Values[i])
		if err != nil {
			return err
		}
		n.properties[name] = child
	}
	if len(props.Keys) != 0 {
		n.mapProps = make([]mapProp, len(props.Keys))
		for i, name := range props.Keys {
			n.mapProps[i] = mapProp{name, n.properties[name]}
		}
		strictjson.SortKeysFunc(n.mapProps, mapProp.key)
	}
	return nil
}

// mapPathProperties is the most properties a node has for forMap to
// find its required members by requiredMask.
const mapPathProperties = 16

// indexRequired sets requiredMask and requiredDeclared once properties and
// required are compiled.
func (n *node) indexRequired() {
	if len(n.mapProps) > mapPathProperties {
		return
	}
	n.requiredDeclared = true
	for _, name := range n.required {
		i := 0
		for i < len(n.mapProps) && n.mapProps[i].name != name {
			i++
		}
		if i == len(n.mapProps) {
			n.requiredDeclared = false
			continue
		}
		n.requiredMask |= 1 << i
	}
}

func (c *compiler) compileRequired(n *node, kw *keywordSlots) error {
	v, ok := kw.get(kwRequired)
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return c.invalid("required")
	}
	var seen map[string]bool // past smallRequired names; below, a scan of n.required
	for _, item := range list {
		s, ok := item.(string)
		if !ok || s == "" {
			return c.invalid("required")
		}
		if len(list) > smallRequired {
			if seen == nil {
				seen = make(map[string]bool, len(list))
			}
			if seen[s] {
				return c.invalid("required")
			}
			seen[s] = true
		} else if slices.Contains(n.required, s) {
			return c.invalid("required")
		}
		if n.required == nil {
			n.required = make([]string, 0, len(list))
		}
		n.required = append(n.required, s)
	}
	return nil
}

// smallRequired is the longest required list checked for repeats by a
// scan rather than a set.
const smallRequired = 16

func (c *compiler) compileFlags(n *node, kw *keywordSlots) error {
	if v, ok := kw.get(kwAdditionalProperties); ok {
		b, isBool := v.(bool)
		if !isBool && !c.opts.ExtendedKeywords {
			return c.invalid("additionalProperties") // a schema value is outside the profile
		}
		n.closed = isBool && !b // a schema value: compileExtension
	}
	if v, ok := kw.get(kwUniqueItems); ok {
		b, isBool := v.(bool)
		if !isBool {
			return c.invalid("uniqueItems")
		}
		n.unique = b
	}
	return nil
}

func (c *compiler) compileItems(n *node, kw *keywordSlots) error {
	v, ok := kw.get(kwItems)
	if !ok {
		return nil
	}
	child, err := c.child(".items", v) // the tuple form (an array) fails here too
	if err != nil {
		return err
	}
	n.items = child
	return nil
}

func (c *compiler) compileBranches(n *node, kw *keywordSlots) error {
	for _, k := range [...]struct {
		name, seg string
		slot      int
	}{{"anyOf", ".anyOf[", kwAnyOf}, {"oneOf", ".oneOf[", kwOneOf}} {
		v, ok := kw.get(k.slot)
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return c.invalid(k.name)
		}
		branches := make([]*node, len(list))
		for i, b := range list {
			child, err := c.element(k.seg, i, b)
			if err != nil {
				return err
			}
			branches[i] = child
		}
		if k.slot == kwAnyOf {
			n.anyOf = branches
		} else {
			n.oneOf = branches
		}
	}
	return nil
}

func (c *compiler) compileValues(n *node, kw *keywordSlots) error {
	if v, ok := kw.get(kwEnum); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return c.invalid("enum")
		}
		n.enum, n.hasEnum = list, true
	}
	if v, ok := kw.get(kwConst); ok {
		n.constant, n.hasConst = v, true // "const": null means "must be null"
	}
	return nil
}

func (c *compiler) compileRanges(n *node, kw *keywordSlots) error {
	var err error
	if n.minLength, n.maxLength, err = c.countRange(kw, kwMinLength, kwMaxLength); err != nil {
		return err
	}
	if n.minItems, n.maxItems, err = c.countRange(kw, kwMinItems, kwMaxItems); err != nil {
		return err
	}
	lo, hasLo := kw.get(kwMinimum)
	hi, hasHi := kw.get(kwMaximum)
	if hasLo {
		f, ok := lo.(float64)
		if !ok {
			return c.invalid("minimum")
		}
		n.minimum = &f
	}
	if hasHi {
		f, ok := hi.(float64)
		if !ok {
			return c.invalid("maximum")
		}
		n.maximum = &f
	}
	if n.minimum != nil && n.maximum != nil && *n.minimum > *n.maximum {
		return c.invalid("minimum")
	}
	return nil
}

// countRange reads a pair of non-negative safe-integer bounds. An
// absent minimum is 0 and an absent maximum is -1.
func (c *compiler) countRange(kw *keywordSlots, minSlot, maxSlot int) (int, int, error) {
	lo, hi := 0, -1
	if v, ok := kw.get(minSlot); ok {
		n, ok := count(v)
		if !ok {
			return 0, 0, c.invalid(Keywords[minSlot])
		}
		lo = n
	}
	if v, ok := kw.get(maxSlot); ok {
		n, ok := count(v)
		if !ok {
			return 0, 0, c.invalid(Keywords[maxSlot])
		}
		hi = n
	}
	if hi >= 0 && lo > hi {
		return 0, 0, c.invalid(Keywords[minSlot])
	}
	return lo, hi, nil
}

// count accepts a non-negative safe integer; 2.0 is the same number as 2.
func count(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || !strictjson.IsIntegral(f) || f > strictjson.MaxSafeInteger {
		return 0, false
	}
	return int(f), true
}
