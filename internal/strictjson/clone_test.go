package strictjson

import (
	"reflect"
	"testing"
)

func TestClone_SharesNothing(t *testing.T) {
	orig := map[string]any{"a": []any{map[string]any{"b": 1.0}, "s"}, "c": map[string]any{}, "n": nil}
	want := map[string]any{"a": []any{map[string]any{"b": 1.0}, "s"}, "c": map[string]any{}, "n": nil}
	got := CloneObject(orig)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("clone %v, want %v", got, want)
	}
	got["a"].([]any)[0].(map[string]any)["b"] = 2.0
	got["a"].([]any)[1] = "t"
	got["c"].(map[string]any)["x"] = true
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("changing the clone changed the original: %v", orig)
	}
	if CloneObject(nil) != nil {
		t.Fatal("CloneObject(nil) is not nil")
	}
	if v := Clone("x"); v != "x" {
		t.Fatalf("Clone of a scalar: %v", v)
	}
}
