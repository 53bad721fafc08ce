package jssize

import (
	"math/rand/v2"
	"testing"

	"purra.dev/purramcp/internal/testvalues"
)

// layoutSample has what layouts decide: tags, omitempty, omitzero,
// embedding, a ",string" field in a nested type, pointers and interfaces.
type layoutSample struct {
	Embedded
	Name    string         `json:"name"`
	Skip    string         `json:"-"`
	Opt     *int           `json:"opt,omitempty"`
	Zero    [2]int         `json:"zero,omitzero"`
	Any     any            `json:"any,omitempty"`
	Nested  *layoutNested  `json:"nested,omitempty"`
	Members map[string]any `json:"members"`
}

type Embedded struct {
	Inner string `json:"inner"`
	Name  string // shadowed by the outer tag
}

type layoutNested struct {
	Count int `json:"count,string"`
	Text  string
}

// TestLayouts_SameAsWithin: a Layouts prepared for some types counts every
// value, at every limit, exactly as Within does, with the same error, for
// prepared and unprepared types alike, and stays unchanged by the walks.
func TestLayouts_SameAsWithin(t *testing.T) {
	l := NewLayouts(layoutSample{}, &layoutNested{}, 3, nil)
	prepared := len(l.fields)
	r := rand.New(rand.NewPCG(14, 13))
	for i := range 3000 {
		var v any
		switch i % 3 {
		case 0:
			v = testvalues.Random(r, 4)
		case 1:
			n := r.IntN(1000)
			v = &layoutSample{Embedded: Embedded{Inner: "i", Name: "n"}, Name: "x", Opt: &n, Any: testvalues.Random(r, 3),
				Nested: &layoutNested{Count: n, Text: "t"}, Members: map[string]any{"m": testvalues.Random(r, 2)}}
		default:
			v = []any{layoutNested{Count: i}, struct {
				A int `json:"a"`
			}{i}, testvalues.Random(r, 2)}
		}
		limit := r.IntN(400)
		want, wantErr := Within(v, limit)
		got, gotErr := l.Within(v, limit)
		// A walk that finished under the limit without an error is exact
		// and order-independent; past the limit or on an error the count
		// and the error are where the walk stopped, which map order moves.
		exact := func(n int, err error) bool { return err == nil && n <= limit }
		if exact(want, wantErr) != exact(got, gotErr) || exact(want, wantErr) && got != want {
			t.Fatalf("value %d at limit %d: Layouts.Within %d, %v; Within %d, %v", i, limit, got, gotErr, want, wantErr)
		}
	}
	if len(l.fields) != prepared {
		t.Fatalf("walks added layouts to a prepared set: %d, was %d", len(l.fields), prepared)
	}
}
