package purraopenai_test

import (
	"reflect"
	"testing"

	"purra.dev/purramcp/integrations/purraopenai"
	"purra.dev/purramcp/purramcptest"
)

func TestToolbox_DeclarationsAreFreshCopies(t *testing.T) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	want := defs[0].InputSchema
	tb, err := purraopenai.New(defs, purraopenai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	chat := tb.ChatTools()
	chat[0].OfFunction.Function.Parameters["properties"] = "changed"
	resp := tb.ResponsesTools()
	resp[0].OfFunction.Parameters["properties"] = "changed"
	defs[0].InputSchema = nil // the Toolbox copied defs
	if got := tb.ChatTools()[0].OfFunction.Function.Parameters; !reflect.DeepEqual(map[string]any(got), want) {
		t.Fatalf("chat parameters after a change %v", got)
	}
	if got := tb.ResponsesTools()[0].OfFunction.Parameters; !reflect.DeepEqual(got, want) {
		t.Fatalf("responses parameters after a change %v", got)
	}
}
