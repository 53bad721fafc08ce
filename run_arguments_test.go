package purramcp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"purra.dev/purramcp/internal/testvalues"
)

// TestRun_ParseArgumentsAsMarshal: Run's parseArguments gives the same wire
// bytes and value as the path it replaced (Parse then json.Marshal), for
// texts in any spelling (escapes, number forms, member order, array-index
// names).
func TestRun_ParseArgumentsAsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2))

	contract, err := NewContract(ContractOptions{SchemaID: "s", SchemaVersion: "1",
		Schema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{`{}`, ` { "b" : 1 , "a" : [ 1e2 , -0 , 0.5e-7 , 1E21 ] } `,
		`{"\u003c\u2028":"\ud83d\ude00\n\u0000","10":1,"2":2,"x":{"z":null,"y":true}}`,
		`{"s":"<>&\"\\\/\b\f\r\t\u001f\u007f"}`, `{"n":123456789012345678901234567890,"m":-1.0e-400}`}
	for range 3000 {
		raw, err := json.Marshal(testvalues.Wire(r, 4))
		if err == nil && bytes.HasPrefix(raw, []byte("{")) {
			texts = append(texts, string(raw), strings.ReplaceAll(string(raw), ",", " , "))
		}
	}
	for _, text := range texts {
		want, wantErr := contract.Parse(text)
		gotValue, gotWire, gotErr := parseArguments(contract, text)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s: parseArguments %v, Parse %v", text, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		wantWire, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(gotValue)
		if !bytes.Equal(gotWire, wantWire) || !bytes.Equal(again, wantWire) {
			t.Fatalf("%s:\n got %s\nwant %s", text, gotWire, wantWire)
		}
	}
}
