package purramcp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"purra.dev/purramcp"
)

// TestRequireReadOnlyHint: with the option every bound tool must claim
// readOnlyHint true and not destructiveHint true, else
// mcp_annotation_conflict; the hints never enter the snapshot or the
// digest; without the option annotations decide nothing.
func TestRequireReadOnlyHint(t *testing.T) {
	f := loadMCPFixture(t)
	bare := withField(t, f.Tool, "annotations", nil)
	for _, tc := range []struct {
		id          string
		annotations any
		want        string
	}{
		{"none", nil, purramcp.CodeAnnotationConflict},
		{"empty", map[string]any{}, purramcp.CodeAnnotationConflict},
		{"read_only_false", map[string]any{"readOnlyHint": false}, purramcp.CodeAnnotationConflict},
		{"fixture_destructive", map[string]any{"readOnlyHint": false, "destructiveHint": true}, purramcp.CodeAnnotationConflict},
		{"read_only_and_destructive", map[string]any{"readOnlyHint": true, "destructiveHint": true}, purramcp.CodeAnnotationConflict},
		{"read_only", map[string]any{"readOnlyHint": true}, ""},
		{"read_only_not_destructive", map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "title": "x"}, ""},
		{"only_not_destructive", map[string]any{"destructiveHint": false}, purramcp.CodeAnnotationConflict},
	} {
		t.Run(tc.id, func(t *testing.T) {
			tool := bare
			if tc.annotations != nil {
				tool = withField(t, bare, "annotations", tc.annotations)
			}
			for _, version := range testVersions {
				h := sdkHarness(t, newSDKServer(t, nil, tool), version)
				catalog, err := approving(t, t.Context(), h, purramcp.DiscoveryOptions{RequireReadOnlyHint: true})
				if got := purramcp.CodeOf(err); got != tc.want {
					t.Errorf("%s at %s: got %q, want %q", tc.id, version, got, tc.want)
				}
				plain, plainErr := discoverDefault(t, h, purramcp.Limits{})
				if plainErr != nil {
					t.Fatalf("%s at %s: without the option annotations decide nothing: %v", tc.id, version, plainErr)
				}
				if tc.want != "" {
					if catalog != nil {
						t.Errorf("catalog = %v, want nil", catalog)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, want := catalog.Snapshot(), plain.Snapshot(); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: hints are not identity: got %v, want %v", tc.id, got, want)
				}
				unannotated, err := discoverDefault(t, sdkHarness(t, newSDKServer(t, nil, bare), version), purramcp.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := catalog.Snapshot().RevisionDigest, unannotated.Snapshot().RevisionDigest; got != want {
					t.Errorf("%v: got %q, want %q", tc.id, got, want)
				}
			}
		})
	}
}

// TestRequireReadOnlyHint_Order: the hint is checked per bound tool after its
// schemas compile: a schema or description fault keeps its code; an unbound
// tool's hints are never checked; the first bound tool in listing order to
// fail decides.
func TestRequireReadOnlyHint_Order(t *testing.T) {
	f := loadMCPFixture(t)
	unhinted := withField(t, f.Tool, "annotations", nil)
	badSchema := withField(t, unhinted, "inputSchema", json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","format":"uri"}}}`))
	hinted := withField(t, f.Tool, "annotations", map[string]any{"readOnlyHint": true})
	hintedOther := withField(t, json.RawMessage(otherTool), "annotations", map[string]any{"readOnlyHint": true})
	unhintedOther := json.RawMessage(otherTool)
	for _, tc := range []struct {
		id       string
		pages    []string
		bindings map[string]purramcp.ToolBinding
		limits   purramcp.Limits
		want     string
	}{
		{"schema_first", []string{page("", string(badSchema))}, searchBinding(), purramcp.Limits{}, purramcp.CodeSchemaUnsupported},
		{"description_first", []string{page("", string(unhinted))}, searchBinding(), purramcp.Limits{MaxDescriptionBytes: 2},
			purramcp.CodeCatalogLimitExceeded},
		{"unbound_unchecked", []string{page("", string(hinted), string(unhintedOther))}, searchBinding(), purramcp.Limits{}, ""},
		{"second_bound_fails", []string{page("", string(hinted), string(unhintedOther))}, otherBinding(), purramcp.Limits{},
			purramcp.CodeAnnotationConflict},
		{"stops_at_conflict", []string{page("p2", string(hintedOther), string(unhinted)), page("", `{"name":"x","inputSchema":{"type":"string"}}`)},
			otherBinding(), purramcp.Limits{}, purramcp.CodeAnnotationConflict},
		{"both_hinted", []string{page("", string(hinted), string(hintedOther))}, otherBinding(), purramcp.Limits{}, ""},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := rawHarness(t, &rawServer{pages: tc.pages})
			_, err := purramcp.DiscoverTools(t.Context(), h.session, "fixture", tc.bindings,
				purramcp.DiscoveryOptions{Monitor: h.monitor, Limits: tc.limits, RequireReadOnlyHint: true})
			if got := purramcp.CodeOf(err); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.id, got, tc.want)
			}
			if tc.id == "stops_at_conflict" {
				lists, _ := h.counts()
				if lists != 1 {
					t.Errorf("%s: the discovery stops at the conflict: got %v, want %v", tc.id, lists, 1)
				}
			}
		})
	}
}
