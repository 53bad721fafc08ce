package strictjson

// Measure is what a walk counted of a value it accepted: its nodes (values
// and object keys) and its detached bytes (see Limits.Bytes).
type Measure struct {
	Nodes, Bytes int
}

// Shared is Snapshot for a caller that may keep v itself: when v is already
// a value of this package's domain in decoded-Go form (nil, bool, float64
// other than −0, string, []any and map[string]any, as encoding/json decodes
// into an interface) and within lim, it returns v unchanged, sharing every
// container; otherwise it returns what Own(Snapshot(v, lim)) returns. It
// fails exactly when Snapshot would (with an error MeasureOf chose), and on
// success also returns v's Measure. Its cost is bounded by lim as
// Snapshot's is: the one domain and limit walk also checks the form.
func Shared(v any, lim Limits) (any, Measure, error) {
	m, decoded, err := measure(v, lim)
	if err != nil {
		return nil, Measure{}, err
	}
	if decoded {
		return v, m, nil
	}
	s, err := Snapshot(v, lim)
	if err != nil {
		return nil, Measure{}, err // unreachable: the walk accepted v under the same rules
	}
	return Own(s), m, nil
}

// MeasureOf walks v as Snapshot does, in AnyOrder and without building
// anything, and returns its Measure. It fails exactly when Snapshot would,
// though when v breaks more than one rule its error may name another.
func MeasureOf(v any, lim Limits) (Measure, error) {
	m, _, err := measure(v, lim)
	return m, err
}

// measure is MeasureOf that also reports whether v is in decoded-Go form.
func measure(v any, lim Limits) (Measure, bool, error) {
	w := new(walker)
	if err := w.run(v, lim, AnyOrder, discard{}); err != nil {
		return Measure{}, false, err
	}
	return Measure{Nodes: w.nodes, Bytes: w.bytes}, !w.foreign, nil
}

// discard is a Visitor that keeps nothing.
type discard struct{}

func (discard) Null()           {}
func (discard) Bool(bool)       {}
func (discard) Number(float64)  {}
func (discard) String(string)   {}
func (discard) BeginArray(int)  {}
func (discard) BeginObject(int) {}
func (discard) Key(string)      {}
