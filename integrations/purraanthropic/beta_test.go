package purraanthropic_test

import (
	"encoding/json"
	"errors"
	"testing"

	"purra.dev/purramcp"
	"purra.dev/purramcp/integrations/purraanthropic"
	"purra.dev/purramcp/purramcptest"
)

func TestExecute_ToolErrorIsTheCode(t *testing.T) {
	f := purramcptest.NewFixture(t)
	tools, err := purraanthropic.BetaTools(f.Catalog.Registrations(), purraanthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name() != "fail" {
			continue
		}
		blocks, err := tool.Execute(t.Context(), json.RawMessage(`{"q":"x"}`))
		var te *purraanthropic.ToolError
		if blocks != nil || !errors.As(err, &te) || te.Code != purramcp.CodeToolError || err.Error() != purramcp.CodeToolError {
			t.Fatalf("Execute: %v %v", blocks, err)
		}
		return
	}
	t.Fatal("no fail tool")
}
