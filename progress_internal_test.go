package purramcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestProgressTable_Params: only an object with a string token the table
// handed out and numeric progress (and total, when present) is delivered;
// every other params value is dropped without a panic.
func TestProgressTable_Params(t *testing.T) {
	var table progressTable
	var got [][2]float64
	token, end := table.register(func(progress, total float64) { got = append(got, [2]float64{progress, total}) })
	if token != "purramcp-1" {
		t.Fatalf("token = %q, want purramcp-1", token)
	}
	for _, params := range []string{
		``, `null`, `[]`, `"purramcp-1"`, `{}`,
		`{"progressToken":1,"progress":1}`,
		`{"progressToken":"purramcp-2","progress":1}`,
		`{"progressToken":"purramcp-1"}`,
		`{"progressToken":"purramcp-1","progress":"1"}`,
		`{"progressToken":"purramcp-1","progress":null}`,
		`{"progressToken":"purramcp-1","progress":1,"total":"2"}`,
		`{"progressToken":"purramcp-1","progress":1,"total":null}`,
		`{"progressToken":"purramcp-1","progress":1e999}`,
		`{"progressToken":"purramcp-1","progress":1,"message":"m"}`, // delivered: the message is not
		`{"progressToken":"purramcp-1","progress":0.5,"total":9}`,   // a decrease
		`{"progressToken":"purramcp-1","progress":2,"total":9}`,
	} {
		table.deliverParams(json.RawMessage(params))
	}
	end()
	table.deliverParams(json.RawMessage(`{"progressToken":"purramcp-1","progress":3}`))
	if want := [][2]float64{{1, 0}, {2, 9}}; !reflect.DeepEqual(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
	if len(table.calls) != 0 {
		t.Errorf("%d subscriptions left after end", len(table.calls))
	}
}
