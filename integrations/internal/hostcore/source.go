package hostcore

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"purra.dev/purramcp"
)

// A Source hands out registrations: a *purramcp.Catalog (one session's
// approved tools), a fleet (the ready servers' tools, changing as servers
// come and go), or [Static]. Each call returns the current registrations;
// the caller may keep them, and never changes them.
type Source interface {
	Registrations() []purramcp.ToolDefinition
}

// Static returns a Source that always returns defs (copied now, so a later
// change to the caller's slice changes nothing); it is what the
// integrations' constructors taking a []purramcp.ToolDefinition serve.
func Static(defs []purramcp.ToolDefinition) Source { return static(slices.Clone(defs)) }

// static is a fixed list of registrations.
type static []purramcp.ToolDefinition

// Registrations returns a fresh slice of the definitions.
func (s static) Registrations() []purramcp.ToolDefinition { return slices.Clone(s) }

// Rules are what an integration requires of every definition it serves,
// beyond a non-empty unique name and a non-nil Run, which it always
// requires.
type Rules struct {
	// Package prefixes every error ("purraopenai").
	Package string
	// ValidName, when set, is what the vendor accepts as a tool name; nil
	// accepts any non-empty name.
	ValidName func(string) bool
	// ObjectRoot requires each input schema's root to be {"type":"object"}
	// (vendors that always send "type":"object" themselves).
	ObjectRoot bool
}

// Check returns an error naming the first definition that breaks the
// rules, in order: an empty or invalid name, a name given twice, a nil Run,
// or (with ObjectRoot) a schema root that is not type "object".
func (r Rules) Check(defs []purramcp.ToolDefinition) error {
	seen := make(map[string]bool, len(defs))
	for i, d := range defs {
		switch {
		case d.Name == "":
			return fmt.Errorf("%s: definition %d has an empty name", r.Package, i)
		case r.ValidName != nil && !r.ValidName(d.Name):
			return fmt.Errorf("%s: definition %d: name %q is not a valid tool name", r.Package, i, d.Name)
		case seen[d.Name]:
			return fmt.Errorf("%s: tool %q is defined twice", r.Package, d.Name)
		case d.Run == nil:
			return fmt.Errorf("%s: tool %q has no Run", r.Package, d.Name)
		case r.ObjectRoot && d.InputSchema["type"] != "object":
			return fmt.Errorf("%s: tool %q: input schema root is not type \"object\"", r.Package, d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

// A List is one read of a source that passed the rules: the definitions in
// the source's order and an index by name. It is never changed once made.
type List struct {
	defs   []purramcp.ToolDefinition
	byName map[string]int
}

// Defs returns the definitions, in the source's order. The slice is shared:
// the caller must not change it.
func (l *List) Defs() []purramcp.ToolDefinition { return l.defs }

// Lookup returns the definition named name.
func (l *List) Lookup(name string) (purramcp.ToolDefinition, bool) {
	i, ok := l.byName[name]
	if !ok {
		return purramcp.ToolDefinition{}, false
	}
	return l.defs[i], true
}

// A Set is what one adapter value serves: its source, the list it read last
// and the gates of its names ([Gates] documents their scope). It is safe for
// concurrent use.
type Set struct {
	rules   Rules
	gates   Gates
	current atomic.Pointer[List]

	mu  sync.Mutex // guards src, and orders reads so an older read never replaces a newer one
	src Source
}

// NewSet returns a set over src after a first read. It fails when src is
// nil (a nil interface, or a nil pointer such as a nil *purramcp.Catalog) or
// its registrations break rules.
func NewSet(src Source, rules Rules) (*Set, error) {
	s := &Set{rules: rules}
	if err := s.Replace(src); err != nil {
		return nil, err
	}
	return s, nil
}

// Replace makes src the set's source and reads it; the gates stay. On an
// error nothing changes.
func (s *Set) Replace(src Source) error {
	if src == nil {
		return fmt.Errorf("%s: nil source", s.rules.Package)
	}
	if v := reflect.ValueOf(src); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%s: nil source", s.rules.Package)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.read(src)
	if err != nil {
		return err
	}
	s.src = src
	s.current.Store(l)
	return nil
}

// Read reads the source again, makes the result current and returns it. On
// an error the current list stays.
func (s *Set) Read() (*List, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.read(s.src)
	if err != nil {
		return nil, err
	}
	s.current.Store(l)
	return l, nil
}

// read reads src and checks the result against the rules.
func (s *Set) read(src Source) (*List, error) {
	defs := src.Registrations()
	if err := s.rules.Check(defs); err != nil {
		return nil, err
	}
	l := &List{defs: defs, byName: make(map[string]int, len(defs))}
	for i, d := range defs {
		l.byName[d.Name] = i
	}
	return l, nil
}

// Current returns the list read last.
func (s *Set) Current() *List { return s.current.Load() }

// Source returns the set's source.
func (s *Set) Source() Source {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src
}

// Gates returns the set's gates, shared by every list it reads.
func (s *Set) Gates() *Gates { return &s.gates }
