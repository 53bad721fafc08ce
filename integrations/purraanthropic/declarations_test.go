package purraanthropic_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"purra.dev/purramcp/integrations/purraanthropic"
	"purra.dev/purramcp/purramcptest"
)

func TestBetaTools_DeclarationsAreFreshCopies(t *testing.T) {
	f := purramcptest.NewFixture(t)
	defs := f.Catalog.Registrations()
	want := defs[0].InputSchema
	tools, err := purraanthropic.BetaTools(defs, purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := tools[0].InputSchema()
	schema.ExtraFields["properties"] = "changed"
	params, err := purraanthropic.ToolParams(defs)
	if err != nil {
		t.Fatal(err)
	}
	params[0].OfTool.InputSchema.ExtraFields["properties"] = "changed"
	if !reflect.DeepEqual(defs[0].InputSchema, want) {
		t.Fatalf("definition's schema changed: %v", defs[0].InputSchema)
	}
	b, _ := json.Marshal(tools[0].InputSchema())
	var got map[string]any
	_ = json.Unmarshal(b, &got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("schema after a change %v, want %v", got, want)
	}
}
